// The router arguments topk_gating and moe_route share, checked in one place under the name of the op the user
// called (moe_route passes them on to topk_gating, whose own checks then find nothing).
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>

#include <cmath>
#include <optional>
#include <string>

#include "common/torch_utils.h"

namespace gpuprim {

// logits [T, E] fp32/fp16/bf16, 0 <= k <= E, score "softmax" or "sigmoid".
inline void check_gating_logits(const char* op, const at::Tensor& logits, const c10::SymInt& k,
                                c10::string_view score) {
  const auto type = logits.scalar_type();
  GPUPRIM_CHECK_DTYPE(type == at::kFloat || type == at::kHalf || type == at::kBFloat16, op, "logits",
                      "float32, float16 or bfloat16", type);
  GPUPRIM_CHECK_ARG(logits.dim() == 2, op, "logits", "2-D [tokens, experts]", logits.sizes());
  const c10::SymInt experts = logits.sym_size(1);
  GPUPRIM_CHECK_ARG(k >= 0 && k <= experts, op, "k", "in [0, " + c10::str(experts) + "] (the number of experts)", k);
  GPUPRIM_CHECK_ARG(score == "softmax" || score == "sigmoid", op, "score", "\"softmax\" or \"sigmoid\"",
                    std::string(score));
}

// bias 1-D [E] floating on logits' device; num_groups and topk_groups both given or both None, num_groups
// dividing E, 1 <= topk_groups <= num_groups, k <= topk_groups * E / num_groups; scaling finite; gate_dtype
// float32, float16 or bfloat16.
inline void check_gating_options(const char* op, const at::Tensor& logits, const c10::SymInt& k,
                                 const std::optional<at::Tensor>& bias, std::optional<int64_t> num_groups,
                                 std::optional<int64_t> topk_groups, double scaling,
                                 std::optional<at::ScalarType> gate_dtype) {
  if (bias.has_value()) {
    GPUPRIM_CHECK_DTYPE(at::isFloatingType(bias->scalar_type()), op, "bias", "a floating-point tensor",
                        bias->scalar_type());
    GPUPRIM_CHECK_ARG(bias->dim() == 1 && bias->sym_size(0) == logits.sym_size(1), op, "bias",
                      c10::str("1-D [num_experts = ", logits.sym_size(1), "]"), bias->sym_sizes());
    check_same_device(op, logits, "bias", *bias);
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
  }
  GPUPRIM_CHECK_ARG(std::isfinite(scaling), op, "scaling", "finite", scaling);
  if (gate_dtype.has_value()) {
    const auto type = *gate_dtype;
    GPUPRIM_CHECK_DTYPE(type == at::kFloat || type == at::kHalf || type == at::kBFloat16, op, "gate_dtype",
                        "float32, float16 or bfloat16", type);
  }
}

}  // namespace gpuprim
