// CUDA glue of gpuprim::run_length_encode: checks, output allocation, stream and workspace.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"
#include "ops/compact/run_length_encode/run_length_encode_launch.h"

namespace gpuprim {
namespace {

// torch.unique_consecutive(x, dim=d) for x of two or more dimensions: the slices x.select(d, i) are the elements.
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_slices_cuda(const at::Tensor& x, int64_t d) {
  const int64_t m = x.size(d);
  const int64_t width = run_length_encode_slice_width(x, d);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor rows = x.movedim(d, 0).contiguous();  // [m, ...]: slice i is row i
  at::Tensor unique = at::empty(rows.sizes(), x.options());
  at::Tensor counts = at::empty({m}, x.options().dtype(at::kLong));
  at::Tensor num_runs = at::empty({1}, x.options().dtype(at::kLong));
  TorchWorkspace workspace(x.device());
  run_length_encode_slices_cuda_launch(rows.const_data_ptr(), to_dtype(x.scalar_type()), m, width,
                                       unique.mutable_data_ptr(), counts.mutable_data_ptr<int64_t>(),
                                       num_runs.mutable_data_ptr<int64_t>(), workspace, current_stream());
  return {unique.movedim(0, d).contiguous(), counts, num_runs};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_cuda(const at::Tensor& x, std::optional<int64_t> dim) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  if (dim.has_value()) {
    const int64_t d = run_length_encode_dim_check(x, *dim);
    // A 1-D x's slices are its elements: the 1-D form gives the same outputs.
    if (x.dim() > 1) return run_length_encode_slices_cuda(x, d);
  }
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
