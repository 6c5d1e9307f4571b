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

std::tuple<at::Tensor, at::Tensor> moe_unpermute_backward_meta(const at::Tensor& grad, const at::Tensor& expert_out,
                                                               const at::Tensor& slots,
                                                               const std::optional<at::Tensor>& gates,
                                                               bool gates_grad) {
  moe_unpermute_backward_check(grad, expert_out, slots, gates, gates_grad);
  at::Tensor grad_expert_out =
      at::empty_symint(expert_out.sym_sizes(), expert_out.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor grad_gates = gates_grad ? at::empty_symint(slots.sym_sizes(), gates->options())
                                     : at::empty({0}, expert_out.options().dtype(moe_acc_type(expert_out)));
  return {grad_expert_out, grad_gates};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) {
  m.impl("moe_unpermute", &moe_unpermute_meta);
  m.impl("moe_unpermute_backward", &moe_unpermute_backward_meta);
}

}  // namespace gpuprim
