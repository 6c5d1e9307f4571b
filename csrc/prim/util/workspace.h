// Temporary device memory for a launcher. The ATen glue implements it with the
// caching allocator (torch_utils.h), so launchers never call cudaMalloc and stay ATen-free.
#pragma once
#include <cstddef>

namespace gpuprim {

class Workspace {
 public:
  virtual ~Workspace() = default;
  // Returns `bytes` of device memory on the op's device, valid until the op returns
  // (stream-ordered: work queued on the current stream may still use it afterwards).
  virtual void* allocate(size_t bytes) = 0;
};

}  // namespace gpuprim
