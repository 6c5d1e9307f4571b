// CUDA glue of gpuprim::sum and gpuprim::mean: checks, output allocation, stream and workspace;
// kernels in sum_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/reduce/sum/sum.h"
#include "ops/reduce/sum/sum_launch.h"

namespace gpuprim {
namespace {

// Integer sums: int64 per row of the [rows, cols] view, cast to the output dtype.
at::Tensor sum_integer_cuda(const at::Tensor& x, const SumPlan& plan, bool keepdim) {
  int64_t rows = 0, cols = 0;
  const at::Tensor matrix = sum_as_rows(sum_input(x, plan), plan, rows, cols);
  at::Tensor out = sum_output(x, plan, keepdim);
  if (rows == 0) return out;
  if (cols == 0) return out.zero_();
  at::Tensor sums = plan.out_dtype == at::kLong ? out : at::empty({rows}, x.options().dtype(at::kLong));
  // Row r is matrix[r * cols, (r + 1) * cols): CUB's segment offsets.
  const at::Tensor offsets = rows == 1 ? at::Tensor() : at::arange(0, (rows + 1) * cols, cols, sums.options());
  TorchWorkspace workspace(x.device());
  sum_cuda_launch_integer(matrix.const_data_ptr(), to_dtype(matrix.scalar_type()), sums.mutable_data_ptr<int64_t>(),
                          rows, cols, rows == 1 ? nullptr : offsets.const_data_ptr<int64_t>(), workspace,
                          current_stream());
  if (!sums.is_same(out)) out.copy_(sums.view(out.sizes()));
  return out;
}

template <bool kMean>
at::Tensor sum_cuda(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const SumPlan plan = sum_check(sum_op_name(kMean), x, dim, dtype);
  const c10::cuda::CUDAGuard guard(x.device());
  const ReduceConfig config = reduce_config();
  if (plan.integer) return sum_integer_cuda(x, plan, keepdim);
  const at::Tensor input = sum_input(x, plan);  // integer x with a floating dtype: cast first, as torch
  // Reduced dims forming one block [first, last] followed by kept dims, in a contiguous x: reduce the
  // [outer, n, inner] view in place (coalesced across inner) instead of transposing it into rows.
  const int64_t ndim = x.dim();
  int64_t first = 0;
  while (first < ndim && !plan.reduced[first]) ++first;
  int64_t last = first;
  while (last + 1 < ndim && plan.reduced[last + 1]) ++last;
  bool block = first < ndim && last + 1 < ndim;
  for (int64_t d = last + 1; d < ndim; ++d) block = block && !plan.reduced[d];
  const int64_t inner = block ? c10::multiply_integers(x.sizes().slice(last + 1)) : 1;
  if (block && inner != 1 && input.is_contiguous()) {  // inner == 1: the rows path reads 16-byte vectors
    const auto sizes = x.sizes();
    const int64_t outer = c10::multiply_integers(sizes.slice(0, first));
    const int64_t n = c10::multiply_integers(sizes.slice(first, last + 1 - first));
    at::Tensor out = sum_output(x, plan, keepdim);
    if (outer * inner == 0) return out;
    TorchWorkspace workspace(x.device());
    sum_cuda_launch_columns(input.const_data_ptr(), to_dtype(input.scalar_type()), out.mutable_data_ptr(),
                            to_dtype(plan.out_dtype), outer, n, inner, kMean, config.blocks, config.threads, workspace,
                            current_stream());
    return out;
  }
  int64_t rows = 0, cols = 0;
  const at::Tensor matrix = sum_as_rows(input, plan, rows, cols);
  at::Tensor out = sum_output(x, plan, keepdim);
  if (rows == 0) return out;
  TorchWorkspace workspace(x.device());
  sum_cuda_launch(matrix.const_data_ptr(), to_dtype(matrix.scalar_type()), out.mutable_data_ptr(),
                  to_dtype(plan.out_dtype), rows, cols, kMean, config.blocks, config.threads, workspace,
                  current_stream());
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { impl(m, "sum", &sum_cuda<false>, "mean", &sum_cuda<true>); }

}  // namespace gpuprim
