// CUDA glue of gpuprim::run_length_encode: checks, output allocation, stream and workspace.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"
#include "ops/compact/run_length_encode/run_length_encode_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_cuda(const at::Tensor& x) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  run_length_encode_check(x);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  at::Tensor unique = at::empty({x.numel()}, x.options());
  at::Tensor counts = at::empty({x.numel()}, x.options().dtype(at::kLong));
  at::Tensor num_runs = at::empty({1}, x.options().dtype(at::kLong));
  TorchWorkspace workspace(x.device());
  run_length_encode_cuda_launch(input.const_data_ptr(), to_dtype(x.scalar_type()), x.numel(),
                                unique.mutable_data_ptr(), counts.mutable_data_ptr<int64_t>(),
                                num_runs.mutable_data_ptr<int64_t>(), workspace, current_stream());
  return {unique, counts, num_runs};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("run_length_encode", &run_length_encode_cuda); }

}  // namespace gpuprim
