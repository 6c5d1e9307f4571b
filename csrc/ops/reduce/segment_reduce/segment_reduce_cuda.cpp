// CUDA glue of gpuprim::segment_reduce and its backward: checks, outputs, stream and workspace;
// kernels in segment_reduce_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/reduce/segment_reduce/segment_reduce.h"

namespace gpuprim {
namespace {

at::Tensor segment_reduce_cuda(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce,
                               int64_t dim) {
  const InputErrorScope errors(src.device(), InputOp::kSegmentReduce);  // first: what earlier calls found
  const SegmentReduceArgs args = segment_reduce_check(src, offsets, reduce, dim);
  const c10::cuda::CUDAGuard guard(src.device());
  const at::Tensor input = src.contiguous();
  at::Tensor out = at::empty_symint(segment_reduce_out_sizes(src, offsets, args.dim), input.options());
  if (out.numel() == 0) return out;
  // int64 offsets for the kernels: int32 ones are widened (num_segments + 1 elements, negligible).
  const at::Tensor offsets64 = offsets.to(at::kLong).contiguous();
  TorchWorkspace workspace(input.device());
  segment_reduce_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()),
                             offsets64.const_data_ptr<int64_t>(), segment_shape(input, offsets, args.dim),
                             args.reduce, errors.check(InputArg::kOffsets, InputRule::kNotAtEnd, input.size(args.dim)),
                             out.mutable_data_ptr(), workspace, current_stream());
  return out;
}

at::Tensor segment_reduce_backward_cuda(const at::Tensor& grad, const at::Tensor& src, const at::Tensor& offsets,
                                        const at::Tensor& out, c10::string_view reduce, int64_t dim) {
  const InputErrorScope errors(src.device(), InputOp::kSegmentReduceBackward);
  const SegmentReduceArgs args = segment_reduce_backward_check(grad, src, offsets, out, reduce, dim);
  const c10::cuda::CUDAGuard guard(src.device());
  const at::Tensor input = src.contiguous();
  const bool extreme = args.reduce == Reduce::kMax || args.reduce == Reduce::kMin;
  // max/min scatter into a zeroed gradient; sum/mean write every element.
  at::Tensor grad_src = extreme ? at::zeros(input.sizes(), input.options()) : at::empty(input.sizes(), input.options());
  if (grad_src.numel() == 0) return grad_src;
  const at::Tensor offsets64 = offsets.to(at::kLong).contiguous();
  const at::Tensor grad_c = grad.contiguous(), out_c = out.contiguous();
  TorchWorkspace workspace(input.device());
  segment_reduce_backward_cuda_launch(grad_c.const_data_ptr(), input.const_data_ptr(), out_c.const_data_ptr(),
                                      to_dtype(input.scalar_type()), offsets64.const_data_ptr<int64_t>(),
                                      segment_shape(input, offsets, args.dim), args.reduce,
                                      errors.check(InputArg::kOffsets, InputRule::kNotAtEnd, input.size(args.dim)),
                                      grad_src.mutable_data_ptr(), workspace, current_stream());
  return grad_src;
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(CUDA, segment_reduce, cuda)

}  // namespace gpuprim
