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

GatingOptions topk_gating_options_check(const at::Tensor& logits, const c10::SymInt& k,
                                        const std::optional<at::Tensor>& bias, std::optional<int64_t> num_groups,
                                        std::optional<int64_t> topk_groups, double scaling,
                                        std::optional<at::ScalarType> gate_dtype) {
  constexpr const char* op = "topk_gating";
  GatingOptions options;
  options.scaling = scaling;
  if (bias.has_value()) {
    GPUPRIM_CHECK_DTYPE(at::isFloatingType(bias->scalar_type()), op, "bias", "a floating-point tensor",
                        bias->scalar_type());
    GPUPRIM_CHECK_ARG(bias->dim() == 1 && bias->sym_size(0) == logits.sym_size(1), op, "bias",
                      c10::str("1-D [num_experts = ", logits.sym_size(1), "]"), bias->sym_sizes());
    check_same_device(op, logits, "bias", *bias);
    options.bias = bias;
  }
  GPUPRIM_CHECK_ARG(num_groups.has_value() == topk_groups.has_value(), op, "topk_groups",
                    "given together with num_groups", topk_groups.has_value() ? "given alone" : "None");
  if (num_groups.has_value()) {
    // The group size shapes the selection: a model constant, specialized under torch.compile.
    const int64_t experts = logits.sym_size(1).guard_int(__FILE__, __LINE__);
    GPUPRIM_CHECK_ARG(*num_groups >= 1 && experts % *num_groups == 0, op, "num_groups",
                      c10::str(">= 1 and a divisor of the number of experts ", experts), *num_groups);
    GPUPRIM_CHECK_ARG(*topk_groups >= 1 && *topk_groups <= *num_groups, op, "topk_groups",
                      c10::str("in [1, num_groups = ", *num_groups, "]"), *topk_groups);
    const int64_t eligible = *topk_groups * (experts / *num_groups);
    GPUPRIM_CHECK_ARG(k <= eligible, op, "k",
                      c10::str("<= topk_groups * experts per group = ", eligible, " with group-limited selection"),
                      k);
    options.num_groups = *num_groups;
    options.topk_groups = *topk_groups;
  }
  if (gate_dtype.has_value()) {
    const auto type = *gate_dtype;
    GPUPRIM_CHECK_DTYPE(type == at::kFloat || type == at::kHalf || type == at::kBFloat16, op, "gate_dtype",
                        "float32, float16 or bfloat16", type);
    options.gate_dtype = type;
  }
  return options;
}

std::tuple<at::Tensor, at::Tensor> topk_gating_outputs(const at::Tensor& logits, int64_t k,
                                                       at::ScalarType gate_dtype) {
  const int64_t tokens = logits.size(0);
  return {at::empty({tokens, k}, logits.options().dtype(gate_dtype)),
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
