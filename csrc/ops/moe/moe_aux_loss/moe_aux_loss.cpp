// gpuprim::moe_aux_loss: the router's training losses, a composition of ATen ops and gpuprim::bincount
// (CompositeImplicitAutograd: differentiable in scores through ATen's autograd, traced by torch.compile, no host
// sync, deterministic run to run: bincount's integer counts and ATen's fixed-order reductions).
#include <torch/library.h>

#include <string>

#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

at::Tensor moe_aux_loss_composite(const at::Tensor& expert_ids, const at::Tensor& scores, int64_t num_experts,
                                  c10::string_view kind, bool scores_are_logits) {
  constexpr const char* op = "moe_aux_loss";
  GPUPRIM_CHECK_ARG(kind == "switch" || kind == "z", op, "kind", "'switch' or 'z'", "'" + std::string(kind) + "'");
  GPUPRIM_CHECK_ARG(num_experts >= 1, op, "num_experts", ">= 1", num_experts);
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(scores.scalar_type()), op, "scores", "a floating-point tensor",
                      scores.scalar_type());
  GPUPRIM_CHECK_ARG(scores.dim() == 2 && scores.sym_size(1) == num_experts, op, "scores",
                    c10::str("2-D [tokens, num_experts = ", num_experts, "]"), scores.sym_sizes());
  const at::Tensor x = scores.to(at::kFloat);
  if (kind == "z") {
    GPUPRIM_CHECK_ARG(scores_are_logits, op, "scores", "logits for kind='z'", "probabilities");
    return at::logsumexp(x, {1}).square().mean();
  }
  GPUPRIM_CHECK_ARG(expert_ids.dim() == 2 && expert_ids.sym_size(0) == scores.sym_size(0), op, "expert_ids",
                    c10::str("2-D [tokens = ", scores.sym_size(0), ", k]"), expert_ids.sym_sizes());
  GPUPRIM_CHECK_DTYPE(expert_ids.scalar_type() == at::kLong || expert_ids.scalar_type() == at::kInt, op, "expert_ids",
                      "an int64 or int32 tensor", expert_ids.scalar_type());
  check_same_device(op, scores, "expert_ids", expert_ids);
  // E * sum_e (tokens routed to e / T) * (mean probability of e): every one of a token's k choices counts.
  const at::Tensor probs = scores_are_logits ? at::softmax(x, 1) : x;
  const at::Tensor counts = std::get<0>(gpuprim::bincount(expert_ids.reshape({-1}), num_experts));
  const at::Tensor fraction = counts.to(at::kFloat).div(c10::Scalar(scores.sym_size(0)));
  return (fraction * probs.mean(0)).sum() * static_cast<double>(num_experts);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CompositeImplicitAutograd, m) { m.impl("moe_aux_loss", &moe_aux_loss_composite); }

}  // namespace gpuprim
