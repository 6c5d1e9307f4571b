// CUDA glue for launchers: temp storage from PyTorch's caching allocator and the current stream.
#pragma once
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <vector>

#include "prim/util/workspace.h"

namespace gpuprim {

// Memory from PyTorch's caching allocator on the current stream, released (stream-ordered) when the op
// returns. The allocator is called directly rather than through at::empty: the same memory without a
// tensor's dispatch and bookkeeping, host time that a small op pays per buffer.
class TorchWorkspace final : public Workspace {
 public:
  explicit TorchWorkspace(c10::Device device) : device_(device) {}
  void* allocate(size_t bytes) override {
    const c10::cuda::CUDAGuard guard(device_);  // a no-op when the op's device is current, as it is in the glue
    buffers_.push_back(c10::cuda::CUDACachingAllocator::get()->allocate(bytes));
    return buffers_.back().get();
  }

 private:
  c10::Device device_;
  std::vector<at::DataPtr> buffers_;
};

inline cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

}  // namespace gpuprim
