// Autograd of gpuprim::moe_unpermute. The forward re-dispatches below autograd; the backward is its own
// registered op (gpuprim::moe_unpermute_backward: grad of expert_out, and of gates when they need it).
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class MoeUnpermuteFunction : public torch::autograd::Function<MoeUnpermuteFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& expert_out,
                            const at::Tensor& slots, const std::optional<at::Tensor>& gates) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = gpuprim::moe_unpermute(expert_out, slots, gates);
    }
    ctx->saved_data["has_gates"] = gates.has_value();
    ctx->save_for_backward({expert_out, slots, gates.has_value() ? *gates : at::Tensor()});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const bool has_gates = ctx->saved_data["has_gates"].toBool();
    const bool gates_grad = has_gates && ctx->needs_input_grad(2);
    const std::optional<at::Tensor> gates = has_gates ? std::optional<at::Tensor>(saved[2]) : std::nullopt;
    auto [grad_expert_out, grad_gates] =
        gpuprim::moe_unpermute_backward(grads[0], saved[0], saved[1], gates, gates_grad);
    return {grad_expert_out, at::Tensor(), gates_grad ? grad_gates : at::Tensor()};
  }
};

at::Tensor moe_unpermute_autograd(const at::Tensor& expert_out, const at::Tensor& slots,
                                  const std::optional<at::Tensor>& gates) {
  if (!autograd_needed(expert_out) && !autograd_needed(gates)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::moe_unpermute(expert_out, slots, gates);
  }
  return MoeUnpermuteFunction::apply(expert_out, slots, gates);
}

}  // namespace

// The backward op is not differentiable itself (no double backward): a clear error if someone asks for one.
TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "moe_unpermute", &moe_unpermute_autograd,
       "moe_unpermute_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
