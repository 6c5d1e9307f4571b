// gpuprim::topk_gating's device-independent part: the argument checks of the op and its backward.
#include "ops/topk/topk_gating/topk_gating.h"

#include <string>

#include "common/torch_utils.h"

namespace gpuprim {

gating::Score topk_gating_check(const at::Tensor& logits, const c10::SymInt& k, c10::string_view score) {
  const auto type = logits.scalar_type();
  GPUPRIM_CHECK_DTYPE(type == at::kFloat || type == at::kHalf || type == at::kBFloat16, "topk_gating", "logits",
                      "float32, float16 or bfloat16", type);
  GPUPRIM_CHECK_ARG(logits.dim() == 2, "topk_gating", "logits", "2-D [tokens, experts]", logits.sizes());
  const c10::SymInt experts = logits.sym_size(1);
  GPUPRIM_CHECK_ARG(k >= 0 && k <= experts, "topk_gating", "k",
                    "in [0, " + c10::str(experts) + "] (the number of experts)", k);
  GPUPRIM_CHECK_ARG(score == "softmax" || score == "sigmoid", "topk_gating", "score", "\"softmax\" or \"sigmoid\"",
                    std::string(score));
  return score == "softmax" ? gating::Score::kSoftmax : gating::Score::kSigmoid;
}

std::tuple<at::Tensor, at::Tensor> topk_gating_outputs(const at::Tensor& logits, int64_t k) {
  const int64_t tokens = logits.size(0);
  return {at::empty({tokens, k}, logits.options().dtype(at::kFloat)),
          at::empty({tokens, k}, logits.options().dtype(at::kLong))};
}

void topk_gating_backward_check(const at::Tensor& grad_gates, const at::Tensor& logits, const at::Tensor& gates,
                                const at::Tensor& expert_ids, c10::string_view score) {
  GPUPRIM_CHECK_ARG(gates.dim() == 2, "topk_gating_backward", "gates", "2-D [tokens, k]", gates.sym_sizes());
  topk_gating_check(logits, gates.sym_size(1), score);
  GPUPRIM_CHECK_ARG(gates.sym_size(0) == logits.sym_size(0), "topk_gating_backward", "gates", "[tokens, k]",
                    gates.sym_sizes());
  GPUPRIM_CHECK_ARG(grad_gates.sym_sizes() == gates.sym_sizes(), "topk_gating_backward", "grad_gates",
                    "of gates' shape", grad_gates.sym_sizes());
  GPUPRIM_CHECK_ARG(expert_ids.sym_sizes() == gates.sym_sizes(), "topk_gating_backward", "expert_ids",
                    "of gates' shape", expert_ids.sym_sizes());
  GPUPRIM_CHECK_DTYPE(expert_ids.scalar_type() == at::kLong, "topk_gating_backward", "expert_ids", "int64",
                      expert_ids.scalar_type());
  check_same_device("topk_gating_backward", logits, "grad_gates", grad_gates);
  check_same_device("topk_gating_backward", logits, "gates", gates);
  check_same_device("topk_gating_backward", logits, "expert_ids", expert_ids);
}

}  // namespace gpuprim
