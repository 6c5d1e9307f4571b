// Autograd of gpuprim::topk_gating: the gradient flows to logits through the gates (expert_ids are
// not differentiable); the backward is the registered op gpuprim::topk_gating_backward.
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

// Saves the fp32 gates before scaling and gate_dtype (the backward's formulas need them exactly); with either
// option the forward runs the kernel without them and applies them here (the same bits: one fp32 multiply,
// then a round to nearest even). Without a gradient to compute, the kernel applies them itself.
class TopkGatingFunction : public torch::autograd::Function<TopkGatingFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                                                int64_t k, c10::string_view score, bool renormalize,
                                                const std::optional<at::Tensor>& bias,
                                                std::optional<int64_t> num_groups,
                                                std::optional<int64_t> topk_groups, double scaling,
                                                std::optional<at::ScalarType> gate_dtype) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [gates, expert_ids] =
        gpuprim::topk_gating(logits, k, score, renormalize, bias, num_groups, topk_groups, 1.0, std::nullopt);
    ctx->saved_data["score"] = std::string(score);
    ctx->saved_data["renormalize"] = renormalize;
    ctx->saved_data["scaling"] = scaling;
    ctx->save_for_backward({logits, gates, expert_ids});
    at::Tensor out = scaling != 1.0 ? gates * scaling : gates;
    if (gate_dtype.has_value() && *gate_dtype != at::kFloat) out = out.to(*gate_dtype);
    return with_integer_outputs(ctx, {out}, {expert_ids});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    // logits and the eight other arguments; bias changes only the selection: no gradient.
    torch::autograd::variable_list result(9);
    if (!grads[0].defined()) return result;  // no gradient reached the output
    const auto saved = ctx->get_saved_variables();
    const double scaling = ctx->saved_data["scaling"].toDouble();
    at::Tensor grad = grads[0];
    if (scaling != 1.0) grad = grad.to(at::kFloat) * scaling;
    result[0] = gpuprim::topk_gating_backward(grad, saved[0], saved[1], saved[2],
                                              ctx->saved_data["score"].toStringRef(),
                                              ctx->saved_data["renormalize"].toBool());
    return result;
  }
};

std::tuple<at::Tensor, at::Tensor> topk_gating_autograd(const at::Tensor& logits, int64_t k, c10::string_view score,
                                                        bool renormalize, const std::optional<at::Tensor>& bias,
                                                        std::optional<int64_t> num_groups,
                                                        std::optional<int64_t> topk_groups, double scaling,
                                                        std::optional<at::ScalarType> gate_dtype) {
  if (!autograd_needed(logits) && !autograd_needed(bias)) {
    // Nothing to differentiate: no autograd node (its host cost is most of a small call's), and the fused
    // kernel applies scaling and gate_dtype itself.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::topk_gating(logits, k, score, renormalize, bias, num_groups, topk_groups, scaling, gate_dtype);
  }
  return as_tuple<2>(
      TopkGatingFunction::apply(logits, k, score, renormalize, bias, num_groups, topk_groups, scaling, gate_dtype));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "topk_gating", &topk_gating_autograd,
       "topk_gating_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
