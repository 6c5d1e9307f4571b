// gpuprim::topk_gating — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

#include <optional>

#include "ops/topk/topk_gating/gating_math.h"

namespace gpuprim {

// Validates logits, k and score (common/gating_args.h) and returns the score kind.
gating::Score topk_gating_check(const at::Tensor& logits, const c10::SymInt& k, c10::string_view score);

// The optional arguments of topk_gating, checked. routed(): any of them changes the result, so the kernels of
// the options run (topk_gating_routed_cuda.cu, the CPU's routed rows); otherwise the plain kernels.
struct GatingOptions {
  std::optional<at::Tensor> bias;  // [experts], any floating dtype
  int64_t num_groups = 0;          // 0: no group-limited selection
  int64_t topk_groups = 0;
  double scaling = 1.0;
  at::ScalarType gate_dtype = at::kFloat;
  // Experts ranked by score + bias (fp32) instead of by logit.
  bool by_score() const { return bias.has_value() || num_groups > 0; }
  bool routed() const { return by_score() || scaling != 1.0 || gate_dtype != at::kFloat; }
};

// The options checked against logits [T, E] and k (common/gating_args.h's rules), gathered.
GatingOptions topk_gating_options_check(const at::Tensor& logits, const c10::SymInt& k,
                                        const std::optional<at::Tensor>& bias, std::optional<int64_t> num_groups,
                                        std::optional<int64_t> topk_groups, double scaling,
                                        std::optional<at::ScalarType> gate_dtype);

// The outputs for logits [tokens, experts]: gates (gate_dtype) and expert_ids (int64), both [tokens, k], contiguous.
std::tuple<at::Tensor, at::Tensor> topk_gating_outputs(const at::Tensor& logits, int64_t k,
                                                       at::ScalarType gate_dtype = at::kFloat);

// The CPU kernel with options.routed(): fills gates (options.gate_dtype) and expert_ids [T, k] (k >= 1, T >= 1).
void topk_gating_routed_cpu(const at::Tensor& logits, int64_t k, gating::Score score, bool renormalize,
                            const GatingOptions& options, at::Tensor& gates, at::Tensor& expert_ids);

// The full softmax denominator of row [experts] as the CUDA warp adds it: lane l sums exp(row[e] - row_max) for
// e = l, l + 32, ... in turn, then a butterfly (xor) tree adds the 32 lanes (CPU kernels).
float softmax_denominator_warp_order(const float* row, int64_t experts, float row_max);

void topk_gating_backward_check(const at::Tensor& grad_gates, const at::Tensor& logits, const at::Tensor& gates,
                                const at::Tensor& expert_ids, c10::string_view score);

// The backward written with ATen ops in fp32 (the CPU kernel; CUDA has one fused kernel, topk_gating_backward_cuda.cu):
// the gradient of the gates with respect to logits.
at::Tensor topk_gating_backward_any_device(const at::Tensor& grad_gates, const at::Tensor& logits,
                                           const at::Tensor& gates, const at::Tensor& expert_ids,
                                           c10::string_view score, bool renormalize);

}  // namespace gpuprim
