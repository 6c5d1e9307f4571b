// Shape functions of gpuprim::moe_unpermute ([T, H]) and its backward ([R, H], gates' shape or [0]).
#include <torch/library.h>

#include "ops/moe/moe_unpermute/moe_unpermute.h"

namespace gpuprim {
namespace {

at::Tensor moe_unpermute_meta(const at::Tensor& expert_out, const at::Tensor& slots,
                              const std::optional<at::Tensor>& gates) {
  moe_unpermute_check(expert_out, slots, gates);
  return at::empty_symint({slots.sym_size(0), expert_out.sym_size(1)},
                          expert_out.options().memory_format(at::MemoryFormat::Contiguous));
}

UnpermuteGrads moe_unpermute_backward_meta(const at::Tensor& grad, const at::Tensor& expert_out,
                                           const at::Tensor& slots, const std::optional<at::Tensor>& gates,
                                           bool gates_grad) {
  moe_unpermute_backward_check(grad, expert_out, slots, gates, gates_grad);
  auto [grad_expert_out, grad_gates] = moe_unpermute_backward_outputs(expert_out, slots, gates_grad);
  if (gates_grad) grad_gates = grad_gates.to(gates->scalar_type());
  return {grad_expert_out, grad_gates};
}

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("moe_unpermute", &moe_unpermute_meta); }
TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("moe_unpermute_backward", &moe_unpermute_backward_meta); }

}  // namespace
}  // namespace gpuprim
