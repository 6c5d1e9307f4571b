// Device-independent part of gpuprim::moe_unpermute and its backward: the argument checks of their CPU, CUDA and
// Meta kernels.
#include "ops/moe/moe_common.h"
#include "ops/moe/moe_unpermute/moe_unpermute.h"

namespace gpuprim {

void moe_unpermute_check(const at::Tensor& expert_out, const at::Tensor& slots,
                         const std::optional<at::Tensor>& gates) {
  constexpr const char* op = "moe_unpermute";
  moe_check_rows(op, "expert_out", expert_out, "[rows, hidden_size]");
  moe_check_slots(op, expert_out, slots);
  if (gates.has_value()) {
    check_same_device(op, expert_out, "gates", *gates);
    GPUPRIM_CHECK_DTYPE(at::isFloatingType(gates->scalar_type()), op, "gates", "a floating-point tensor",
                        gates->scalar_type());
    GPUPRIM_CHECK_ARG(gates->sym_sizes().equals(slots.sym_sizes()), op, "gates",
                      c10::str("of routing.slots' shape ", slots.sym_sizes()), gates->sym_sizes());
  }
}

void moe_unpermute_backward_check(const at::Tensor& grad, const at::Tensor& expert_out, const at::Tensor& slots,
                                  const std::optional<at::Tensor>& gates, bool gates_grad) {
  constexpr const char* op = "moe_unpermute_backward";
  moe_unpermute_check(expert_out, slots, gates);
  check_same_device(op, expert_out, "grad", grad);
  GPUPRIM_CHECK_ARG(grad.dim() == 2 && grad.sym_size(0) == slots.sym_size(0) &&
                        grad.sym_size(1) == expert_out.sym_size(1),
                    op, "grad", "of the forward output's shape [tokens, hidden_size]", grad.sym_sizes());
  GPUPRIM_CHECK_DTYPE(grad.scalar_type() == expert_out.scalar_type(), op, "grad",
                      c10::str("of expert_out's dtype ", expert_out.scalar_type()), grad.scalar_type());
  GPUPRIM_CHECK_ARG(!gates_grad || gates.has_value(), op, "gates_grad", "False when gates is None", gates_grad);
}

UnpermuteGrads moe_unpermute_backward_outputs(const at::Tensor& expert_out, const at::Tensor& slots, bool gates_grad) {
  const auto options = expert_out.options().memory_format(at::MemoryFormat::Contiguous);
  const auto acc_options = options.dtype(moe_acc_type(expert_out));
  return {at::empty_symint(expert_out.sym_sizes(), options),
          gates_grad ? at::empty_symint(slots.sym_sizes(), acc_options) : at::empty({0}, acc_options)};
}

}  // namespace gpuprim
