// CPU kernel of gpuprim::topk_gating (the reference for the CUDA kernels, bit for bit: the
// arithmetic lives in gating_math.h), and its backward, written with ATen ops for any device.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/topk/topk_gating/topk_gating.h"

namespace gpuprim {

at::Tensor topk_gating_backward_any_device(const at::Tensor& grad_gates, const at::Tensor& logits,
                                           const at::Tensor& gates, const at::Tensor& expert_ids,
                                           c10::string_view score, bool renormalize) {
  topk_gating_backward_check(grad_gates, logits, gates, expert_ids, score);
  const at::Tensor grad = grad_gates.to(at::kFloat);
  const at::Tensor g = gates.to(at::kFloat);
  const at::Tensor logits_f = logits.to(at::kFloat);
  at::Tensor grad_logits;
  if (score == "softmax") {
    // With renormalize the gates are the softmax over the k selected logits: d l_i = g_i (dg_i - <dg, g>),
    // zero elsewhere. Without, gates are p at the selected experts of p = softmax(all logits):
    // d l_m = [m selected] dg_m g_m - p_m <dg, g>.
    const at::Tensor dot = (grad * g).sum(-1, /*keepdim=*/true);
    if (renormalize) {
      grad_logits = at::zeros_like(logits_f).scatter_(1, expert_ids, g * (grad - dot));
    } else {
      const at::Tensor p = at::softmax(logits_f, -1);
      grad_logits = at::zeros_like(logits_f).scatter_(1, expert_ids, grad * g) - p * dot;
    }
  } else {
    // s = sigmoid(selected logits), ds/dl = s (1 - s); renormalize: g = s / sum(s), so
    // d s_j = (dg_j - <dg, g>) / sum(s).
    const at::Tensor s = at::sigmoid(logits_f.gather(1, expert_ids));
    at::Tensor grad_s = grad;
    if (renormalize) {
      grad_s = (grad - (grad * g).sum(-1, /*keepdim=*/true)) / s.sum(-1, /*keepdim=*/true);
    }
    grad_logits = at::zeros_like(logits_f).scatter_(1, expert_ids, grad_s * s * (1 - s));
  }
  return grad_logits.to(logits.scalar_type());
}

float softmax_denominator_warp_order(const float* row, int64_t experts, float row_max) {
  float partial[gating::kLanes] = {};
  for (int64_t e = 0; e < experts; ++e) partial[e % gating::kLanes] += gating::exp_fp32(row[e] - row_max);
  for (int offset = gating::kLanes / 2; offset >= 1; offset /= 2) {
    float next[gating::kLanes];
    for (int lane = 0; lane < gating::kLanes; ++lane) next[lane] = partial[lane] + partial[lane ^ offset];
    std::copy(next, next + gating::kLanes, partial);
  }
  return partial[0];
}

namespace {

template <typename T>
void topk_gating_rows_cpu(const T* logits, int64_t tokens, int64_t experts, int64_t k, gating::Score score,
                          bool renormalize, float* gates, int64_t* expert_ids) {
  at::parallel_for(0, tokens, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(experts));
    std::vector<uint32_t> keys(static_cast<size_t>(experts));
    std::vector<int64_t> order(static_cast<size_t>(experts));
    std::vector<float> raw(static_cast<size_t>(k));
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t e = 0; e < experts; ++e) {
        row[e] = static_cast<float>(logits[t * experts + e]);
        keys[e] = gating::logit_key(row[e]);
      }
      std::iota(order.begin(), order.end(), int64_t(0));
      // Ranked by logit (softmax and sigmoid are increasing), ties to the lower expert index.
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&keys](int64_t i, int64_t j) { return keys[i] > keys[j] || (keys[i] == keys[j] && i < j); });
      const float max_logit = row[order[0]];  // the top-ranked logit is the row's max (NaN if any)
      float sum = 0.0f;
      for (int64_t j = 0; j < k; ++j) {  // in rank order, as the CUDA kernel adds them
        raw[j] = gating::raw_score(score, row[order[j]], max_logit);
        sum += raw[j];
      }
      float denominator = 1.0f;
      if (renormalize) {
        denominator = sum;
      } else if (score == gating::Score::kSoftmax) {
        denominator = softmax_denominator_warp_order(row.data(), experts, max_logit);
      }
      for (int64_t j = 0; j < k; ++j) {
        gates[t * k + j] = (renormalize || score == gating::Score::kSoftmax) ? raw[j] / denominator : raw[j];
        expert_ids[t * k + j] = order[j];
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> topk_gating_cpu(const at::Tensor& logits, int64_t k, c10::string_view score,
                                                   bool renormalize, const std::optional<at::Tensor>& bias,
                                                   std::optional<int64_t> num_groups,
                                                   std::optional<int64_t> topk_groups, double scaling,
                                                   std::optional<at::ScalarType> gate_dtype) {
  const gating::Score kind = topk_gating_check(logits, k, score);
  const GatingOptions options =
      topk_gating_options_check(logits, k, bias, num_groups, topk_groups, scaling, gate_dtype);
  const int64_t tokens = logits.size(0), experts = logits.size(1);
  at::Tensor gates, expert_ids;
  std::tie(gates, expert_ids) = topk_gating_outputs(logits, k, options.gate_dtype);
  if (gates.numel() == 0) return {gates, expert_ids};
  if (options.routed()) {
    topk_gating_routed_cpu(logits, k, kind, renormalize, options, gates, expert_ids);
    return {gates, expert_ids};
  }
  const at::Tensor input = logits.contiguous();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_topk_gating_cpu", [&] {
    topk_gating_rows_cpu<scalar_t>(input.const_data_ptr<scalar_t>(), tokens, experts, k, kind, renormalize,
                                   gates.mutable_data_ptr<float>(), expert_ids.mutable_data_ptr<int64_t>());
  });
  return {gates, expert_ids};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) {
  impl(m, "topk_gating", &topk_gating_cpu,
       "topk_gating_backward", &topk_gating_backward_any_device);
}

}  // namespace gpuprim
