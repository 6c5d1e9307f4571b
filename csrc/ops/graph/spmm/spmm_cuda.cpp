// CUDA glue of gpuprim::spmm and its backward: checks, outputs, stream and workspace; kernels in spmm_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/graph/spmm/spmm.h"

namespace gpuprim {
namespace {

at::Tensor spmm_cuda(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                     const at::Tensor& dense, c10::string_view reduce) {
  const InputErrorScope errors(dense.device(), InputOp::kSpmm);  // first: what earlier calls found
  const Reduce op = spmm_check(crow, col, values, dense, reduce);
  const c10::cuda::CUDAGuard guard(dense.device());
  const at::Tensor x = dense.contiguous(), crow_c = crow.contiguous(), col_c = col.contiguous();
  const at::Tensor v = values.has_value() ? values->contiguous() : at::Tensor();
  at::Tensor out = at::empty_symint(spmm_out_sizes(crow, dense), x.options());
  if (out.numel() == 0) return out;
  const SpmmShape shape = spmm_shape(crow_c, col_c, x);
  TorchWorkspace workspace(x.device());
  spmm_cuda_launch(crow_c.const_data_ptr(), col_c.const_data_ptr(), to_dtype(crow_c.scalar_type()),
                   v.defined() ? v.const_data_ptr() : nullptr, x.const_data_ptr(),
                   to_dtype(x.scalar_type()), shape, op, errors.check(InputArg::kCrow, InputRule::kNotAtEnd, shape.nnz),
                   errors.check(InputArg::kCol, InputRule::kOutOfRange, shape.cols), out.mutable_data_ptr(),
                   workspace, current_stream());
  return out;
}

at::Tensor spmm_backward_cuda(const at::Tensor& grad, const at::Tensor& crow, const at::Tensor& col,
                              const at::Tensor& dense, c10::string_view reduce) {
  const InputErrorScope errors(dense.device(), InputOp::kSpmmBackward);
  const Reduce op = spmm_backward_check(grad, crow, col, dense, reduce);
  const c10::cuda::CUDAGuard guard(dense.device());
  const at::Tensor x = dense.contiguous(), g = grad.contiguous(), crow_c = crow.contiguous(),
                   col_c = col.contiguous();
  const SpmmShape shape = spmm_shape(crow_c, col_c, x);
  at::Tensor grad_values = shape.rows > 0 ? at::empty({shape.nnz}, x.options()) : at::zeros({shape.nnz}, x.options());
  if (grad_values.numel() == 0) return grad_values;
  spmm_backward_cuda_launch(g.const_data_ptr(), crow_c.const_data_ptr(), col_c.const_data_ptr(),
                            to_dtype(crow_c.scalar_type()), x.const_data_ptr(), to_dtype(x.scalar_type()), shape, op,
                            errors.check(InputArg::kCol, InputRule::kOutOfRange, shape.cols),
                            grad_values.mutable_data_ptr(), current_stream());
  return grad_values;
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(CUDA, spmm, cuda)

}  // namespace gpuprim
