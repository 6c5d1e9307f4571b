// CUDA glue of gpuprim::moe_unpermute and its backward: checks, outputs, stream; kernels in moe_unpermute_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/moe/moe_unpermute/moe_unpermute.h"
#include "ops/moe/moe_unpermute/moe_unpermute_launch.h"

namespace gpuprim {
namespace {

UnpermuteGrads moe_unpermute_backward_cuda(const at::Tensor& grad, const at::Tensor& expert_out,
                                           const at::Tensor& slots, const std::optional<at::Tensor>& gates,
                                           bool gates_grad) {
  const InputErrorScope errors(expert_out.device(), InputOp::kMoeUnpermuteBackward);
  moe_unpermute_backward_check(grad, expert_out, slots, gates, gates_grad);
  const c10::cuda::CUDAGuard guard(expert_out.device());
  const at::Tensor input = expert_out.contiguous(), slot_t = slots.contiguous(), grad_c = grad.contiguous();
  const MoeUnpermuteShape shape{slots.size(0), slots.size(1), input.size(0), input.size(1),
                                errors.check(InputArg::kSlots, InputRule::kOutOfRange, input.size(0), 0,
                                             /*flattened=*/true)};
  // The kernels write every row (zeros where no (token, choice) maps: padding, dropped pairs): no zero fill.
  auto [grad_expert_out, grad_gates] = moe_unpermute_backward_outputs(input, slots, gates_grad);
  const at::Tensor w = moe_gates_in_acc(gates, input);
  if (shape.hidden == 0 && gates_grad && grad_gates.numel() > 0) grad_gates.zero_();
  TorchWorkspace workspace(expert_out.device());
  moe_unpermute_backward_cuda_launch(grad_c.const_data_ptr(), input.const_data_ptr(), to_dtype(input.scalar_type()),
                                     slot_t.const_data_ptr<int64_t>(), w.defined() ? w.const_data_ptr() : nullptr,
                                     shape, grad_expert_out.mutable_data_ptr(),
                                     gates_grad ? grad_gates.mutable_data_ptr() : nullptr, workspace,
                                     current_stream());
  if (gates_grad) grad_gates = grad_gates.to(gates->scalar_type());
  return {grad_expert_out, grad_gates};
}

at::Tensor moe_unpermute_cuda(const at::Tensor& expert_out, const at::Tensor& slots,
                              const std::optional<at::Tensor>& gates) {
  const InputErrorScope errors(expert_out.device(), InputOp::kMoeUnpermute);
  moe_unpermute_check(expert_out, slots, gates);
  const c10::cuda::CUDAGuard guard(expert_out.device());
  const at::Tensor input = expert_out.contiguous(), slot_t = slots.contiguous();
  const MoeUnpermuteShape shape{slots.size(0), slots.size(1), input.size(0), input.size(1),
                                errors.check(InputArg::kSlots, InputRule::kOutOfRange, input.size(0), 0,
                                             /*flattened=*/true)};
  at::Tensor out = at::empty({shape.tokens, shape.hidden}, input.options());
  if (out.numel() == 0) return out;
  const at::Tensor w = moe_gates_in_acc(gates, input);
  moe_unpermute_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), slot_t.const_data_ptr<int64_t>(),
                            w.defined() ? w.const_data_ptr() : nullptr, shape, out.mutable_data_ptr(),
                            current_stream());
  return out;
}

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("moe_unpermute", &moe_unpermute_cuda); }
TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("moe_unpermute_backward", &moe_unpermute_backward_cuda); }

}  // namespace
}  // namespace gpuprim
