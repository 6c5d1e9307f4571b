// CUDA glue of gpuprim::csr_transpose: checks, outputs, stream and workspace; kernels in csr_transpose_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/graph/csr_transpose/csr_transpose.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose_cuda(const at::Tensor& crow, const at::Tensor& col,
                                                                  int64_t num_cols) {
  const InputErrorScope errors(crow.device(), InputOp::kCsrTranspose);
  csr_transpose_check(crow, col, num_cols);
  const c10::cuda::CUDAGuard guard(crow.device());
  auto [crow_t, col_t, perm] = csr_transpose_outputs(crow, col, num_cols);
  const at::Tensor crow_c = crow.contiguous(), col_c = col.contiguous();
  const int64_t rows = crow.size(0) - 1, nnz = col.size(0);
  if (rows == 0) {  // nonzeros without rows only with a bad crow: defined outputs all the same
    col_t.zero_();
    perm.zero_();
  }
  TorchWorkspace workspace(crow.device());
  csr_transpose_cuda_launch(crow_c.const_data_ptr(), col_c.const_data_ptr(), to_dtype(crow.scalar_type()), rows,
                            num_cols, nnz, errors.check(InputArg::kCrow, InputRule::kNotAtEnd, nnz),
                            errors.check(InputArg::kCol, InputRule::kOutOfRange, num_cols),
                            crow_t.mutable_data_ptr(), col_t.mutable_data_ptr(), perm.mutable_data_ptr<int64_t>(),
                            workspace, current_stream());
  return {crow_t, col_t, perm};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("csr_transpose", &csr_transpose_cuda); }

}  // namespace gpuprim
