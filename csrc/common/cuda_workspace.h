// CUDA glue for launchers: temp storage from PyTorch's caching allocator and the current stream.
#pragma once
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <vector>

#include "common/workspace.h"

namespace gpuprim {

// Allocates through at::empty, so memory comes from the caching allocator on the current
// stream and is released (stream-ordered) when the op returns.
class TorchWorkspace final : public Workspace {
 public:
  explicit TorchWorkspace(c10::Device device) : device_(device) {}
  void* allocate(size_t bytes) override {
    buffers_.push_back(at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device_)));
    return buffers_.back().data_ptr();
  }

 private:
  c10::Device device_;
  std::vector<at::Tensor> buffers_;
};

inline cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

}  // namespace gpuprim
