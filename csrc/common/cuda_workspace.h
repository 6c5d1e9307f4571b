// CUDA glue for launchers: temp storage from PyTorch's caching allocator, the current stream, and where
// kernels record bad input.
#pragma once
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <vector>

#include "common/input_errors.h"
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

// Device-side input checks of one op call, made first thing in the glue: the constructor reports what an
// earlier call recorded on the device (check_input_errors: a read of host memory, no sync), and check() gives
// the launcher the InputCheck of one argument, naming the op the user called.
class InputErrorScope {
 public:
  InputErrorScope(c10::Device device, InputOp op) : device_(device.index()), op_(op) { check_input_errors(device_); }
  InputCheck check(InputArg argument, InputRule rule, int64_t bound, int dimension = 0, bool flattened = false) const {
    return {input_error_record(device_), op_, argument, rule, dimension, bound, flattened};
  }

 private:
  c10::DeviceIndex device_;
  InputOp op_;
};

inline cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

}  // namespace gpuprim
