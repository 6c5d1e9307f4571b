// gpuprim::topk_gating — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

#include "ops/topk/topk_gating/gating_math.h"

namespace gpuprim {

// Validates (logits [T, E] fp32/fp16/bf16, 0 <= k <= E, score) and returns the score kind.
gating::Score topk_gating_check(const at::Tensor& logits, const c10::SymInt& k, c10::string_view score);

// The outputs for logits [tokens, experts]: gates (fp32) and expert_ids (int64), both [tokens, k], contiguous.
std::tuple<at::Tensor, at::Tensor> topk_gating_outputs(const at::Tensor& logits, int64_t k);

void topk_gating_backward_check(const at::Tensor& grad_gates, const at::Tensor& logits, const at::Tensor& gates,
                                const at::Tensor& expert_ids, c10::string_view score);

// The backward written with ATen ops in fp32 (the CPU kernel; CUDA has one fused kernel, topk_gating_backward_cuda.cu):
// the gradient of the gates with respect to logits.
at::Tensor topk_gating_backward_any_device(const at::Tensor& grad_gates, const at::Tensor& logits,
                                           const at::Tensor& gates, const at::Tensor& expert_ids,
                                           c10::string_view score, bool renormalize);

}  // namespace gpuprim
