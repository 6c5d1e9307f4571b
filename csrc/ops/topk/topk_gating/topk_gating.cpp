// gpuprim::topk_gating's device-independent part: the argument checks of the op and its backward.
#include "ops/topk/topk_gating/topk_gating.h"

#include <string>

#include "common/gating_args.h"
#include "common/torch_utils.h"

namespace gpuprim {

gating::Score topk_gating_check(const at::Tensor& logits, const c10::SymInt& k, c10::string_view score) {
  check_gating_logits("topk_gating", logits, k, score);
  return score == "softmax" ? gating::Score::kSoftmax : gating::Score::kSigmoid;
}

GatingOptions topk_gating_options_check(const at::Tensor& logits, const c10::SymInt& k,
                                        const std::optional<at::Tensor>& bias, std::optional<int64_t> num_groups,
                                        std::optional<int64_t> topk_groups, double scaling,
                                        std::optional<at::ScalarType> gate_dtype) {
  check_gating_options("topk_gating", logits, k, bias, num_groups, topk_groups, scaling, gate_dtype);
  GatingOptions options;
  options.bias = bias;
  options.num_groups = num_groups.value_or(0);
  options.topk_groups = topk_groups.value_or(0);
  options.scaling = scaling;
  if (gate_dtype.has_value()) options.gate_dtype = *gate_dtype;
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
