// CPU kernel of gpuprim::topk_gating with its options (bias, group-limited selection, scaling, gate dtype):
// the reference for topk_gating_routed_cuda.cu, bit for bit (same arithmetic from gating_math.h, same orders).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ops/topk/topk_gating/topk_gating.h"

namespace gpuprim {
namespace {

// The k best of `candidates` (expert or group indices) by key, ties to the lower index, best first.
void best_first(std::vector<int64_t>& candidates, int64_t k, const std::vector<uint32_t>& keys) {
  std::partial_sort(candidates.begin(), candidates.begin() + k, candidates.end(),
                    [&keys](int64_t i, int64_t j) { return keys[i] > keys[j] || (keys[i] == keys[j] && i < j); });
}

template <typename T>
void routed_rows_cpu(const T* logits, int64_t tokens, int64_t experts, int64_t k, gating::Score score, bool renormalize,
                     const float* bias, const GatingOptions& options, float* gates, int64_t* expert_ids) {
  const bool softmax = score == gating::Score::kSoftmax;
  const bool by_score = options.by_score();
  const int64_t groups = options.num_groups;
  const int64_t group_size = groups > 0 ? experts / groups : experts;
  const float scaling = static_cast<float>(options.scaling);
  at::parallel_for(0, tokens, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(experts));
    std::vector<uint32_t> keys(static_cast<size_t>(experts));
    std::vector<uint32_t> group_keys(static_cast<size_t>(std::max<int64_t>(groups, 1)));
    std::vector<int64_t> candidates, group_order;
    std::vector<float> raw(static_cast<size_t>(k));
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t e = 0; e < experts; ++e) row[e] = static_cast<float>(logits[t * experts + e]);
      // The full softmax: max (NaN ignored), then the denominator in the warp's order (gating_math.h).
      float row_max = -INFINITY, denominator = 1.0f;
      if (softmax && (by_score || !renormalize)) {
        for (int64_t e = 0; e < experts; ++e) row_max = std::fmax(row_max, row[e]);
        denominator = softmax_denominator_warp_order(row.data(), experts, row_max);
      }
      for (int64_t e = 0; e < experts; ++e) {
        if (by_score) {
          const float s = softmax ? gating::exp_fp32(row[e] - row_max) / denominator : gating::sigmoid_fp32(row[e]);
          keys[e] = gating::logit_key(bias != nullptr ? s + bias[e] : s);
        } else {
          keys[e] = gating::logit_key(row[e]);
        }
      }
      candidates.clear();
      if (groups > 0) {
        // Group score: the sum of its two best biased scores; keep the topk_groups best groups.
        group_order.resize(static_cast<size_t>(groups));
        std::iota(group_order.begin(), group_order.end(), int64_t(0));
        for (int64_t g = 0; g < groups; ++g) {
          uint32_t first = 0, second = 0;
          for (int64_t e = g * group_size; e < (g + 1) * group_size; ++e) gating::keep_top2(keys[e], first, second);
          group_keys[g] = gating::logit_key(gating::top2_sum(first, second));
        }
        best_first(group_order, options.topk_groups, group_keys);
        std::sort(group_order.begin(), group_order.begin() + options.topk_groups);
        for (int64_t i = 0; i < options.topk_groups; ++i) {
          for (int64_t e = group_order[i] * group_size; e < (group_order[i] + 1) * group_size; ++e) {
            candidates.push_back(e);
          }
        }
      } else {
        candidates.resize(static_cast<size_t>(experts));
        std::iota(candidates.begin(), candidates.end(), int64_t(0));
      }
      best_first(candidates, k, keys);
      // Gates from the unbiased scores; softmax over the chosen k is shifted by their largest logit.
      float selected_max = -INFINITY;
      for (int64_t j = 0; j < k; ++j) selected_max = std::fmax(selected_max, row[candidates[j]]);
      float sum = 0.0f;
      for (int64_t j = 0; j < k; ++j) {  // in rank order, as the CUDA kernel adds them
        const float logit = row[candidates[j]];
        if (!softmax) {
          raw[j] = gating::sigmoid_fp32(logit);
        } else if (renormalize) {
          raw[j] = gating::exp_fp32(logit - selected_max);
        } else {
          raw[j] = gating::exp_fp32(logit - row_max) / denominator;
        }
        sum += raw[j];
      }
      for (int64_t j = 0; j < k; ++j) {
        const float gate = renormalize ? raw[j] / sum : raw[j];
        gates[t * k + j] = gating::mul_rn(gate, scaling);
        expert_ids[t * k + j] = candidates[j];
      }
    }
  });
}

}  // namespace

void topk_gating_routed_cpu(const at::Tensor& logits, int64_t k, gating::Score score, bool renormalize,
                            const GatingOptions& options, at::Tensor& gates, at::Tensor& expert_ids) {
  const int64_t tokens = logits.size(0), experts = logits.size(1);
  const at::Tensor input = logits.contiguous();
  const at::Tensor bias = options.bias.has_value() ? options.bias->to(at::kFloat).contiguous() : at::Tensor();
  at::Tensor gates_fp32 =
      options.gate_dtype == at::kFloat ? gates : at::empty(gates.sizes(), gates.options().dtype(at::kFloat));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_topk_gating_cpu", [&] {
    routed_rows_cpu<scalar_t>(input.const_data_ptr<scalar_t>(), tokens, experts, k, score, renormalize,
                              bias.defined() ? bias.const_data_ptr<float>() : nullptr, options,
                              gates_fp32.mutable_data_ptr<float>(), expert_ids.mutable_data_ptr<int64_t>());
  });
  if (!gates_fp32.is_same(gates)) gates.copy_(gates_fp32);  // round to nearest even, as the CUDA kernel's store
}

}  // namespace gpuprim
