// CUDA glue of gpuprim::sum and gpuprim::mean: checks, output allocation, stream and workspace;
// kernels in sum_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/sum/sum.h"
#include "ops/sum/sum_launch.h"

namespace gpuprim {
namespace {

at::Tensor sum_impl_cuda(const char* op, const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, bool mean) {
  const SumPlan plan = sum_check(op, x, dim, dtype);
  const c10::cuda::CUDAGuard guard(x.device());
  int64_t rows = 0, cols = 0;
  const at::Tensor matrix = sum_as_rows(x, plan, rows, cols);
  at::Tensor out = at::empty_symint(sum_out_sizes(x, plan, keepdim), x.options().dtype(plan.out_dtype));
  if (rows == 0) return out;
  const ReduceConfig config = reduce_config();
  TorchWorkspace workspace(x.device());
  sum_cuda_launch(matrix.const_data_ptr(), to_dtype(matrix.scalar_type()), out.mutable_data_ptr(),
                  to_dtype(plan.out_dtype), rows, cols, mean, config.blocks, config.threads, workspace,
                  current_stream());
  return out;
}

at::Tensor sum_cuda(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return sum_impl_cuda("sum", x, dim, keepdim, dtype, false);
}

at::Tensor mean_cuda(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype) {
  return sum_impl_cuda("mean", x, dim, keepdim, dtype, true);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) {
  m.impl("sum", &sum_cuda);
  m.impl("mean", &mean_cuda);
}

}  // namespace gpuprim
