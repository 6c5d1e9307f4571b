// Autograd of gpuprim::topk_gating: the gradient flows to logits through the gates (expert_ids are
// not differentiable); the backward is the registered op gpuprim::topk_gating_backward.
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class TopkGatingFunction : public torch::autograd::Function<TopkGatingFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                                                int64_t k, c10::string_view score, bool renormalize) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [gates, expert_ids] = gpuprim::topk_gating(logits, k, score, renormalize);
    ctx->saved_data["score"] = std::string(score);
    ctx->saved_data["renormalize"] = renormalize;
    ctx->save_for_backward({logits, gates, expert_ids});
    ctx->mark_non_differentiable({expert_ids});
    ctx->set_materialize_grads(false);  // no zero tensors for the integer outputs' gradients
    return {gates, expert_ids};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (!grads[0].defined()) return torch::autograd::variable_list(4);  // no gradient reached the output
    const auto saved = ctx->get_saved_variables();
    at::Tensor grad_logits =
        gpuprim::topk_gating_backward(grads[0], saved[0], saved[1], saved[2], ctx->saved_data["score"].toStringRef(),
                                      ctx->saved_data["renormalize"].toBool());
    return {grad_logits, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> topk_gating_autograd(const at::Tensor& logits, int64_t k, c10::string_view score,
                                                        bool renormalize) {
  auto outputs = TopkGatingFunction::apply(logits, k, score, renormalize);
  return {outputs[0], outputs[1]};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  m.impl("topk_gating", &topk_gating_autograd);
  m.impl("topk_gating_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
