// CUDA kernel of gpuprim::topk_gating_backward: one warp per token writes its whole row of grad_logits in one
// launch (the ATen composite used on the CPU takes ~8 launches, which dominated a small MoE step's host time).
// Same formulas as topk_gating_backward_any_device (topk_gating_cpu.cpp), in fp32:
//   softmax, renormalize:   d l_i = g_i (dg_i - <dg, g>) at the selected experts, 0 elsewhere;
//   softmax, no renormalize: d l_m = [m selected] dg_m g_m - p_m <dg, g>, p = softmax(all logits);
//   sigmoid:                d l_i = ds_i s_i (1 - s_i) at the selected experts, ds = dg, or with renormalize
//                           ds = (dg - <dg, g>) / sum(s).
// The row is written first (zeros, or -p <dg, g>), then, after a warp barrier, the selected entries: expert_ids
// must be distinct in a row (as topk_gating returns them); ids outside [0, experts) are skipped.
#include <algorithm>
#include <cstdint>

#include "prim/util/cuda_check.h"
#include "ops/topk/topk_gating/topk_gating_launch.h"
#include "prim/util/convert.cuh"
#include "prim/util/launch.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace {

using gating::Score;

constexpr int kWarp = kWarpSize;

template <typename T>
__global__ void __launch_bounds__(kWarp* kGatingTokensPerBlock)
    gating_backward_kernel(const float* __restrict__ grad_gates, const T* __restrict__ logits,
                           const float* __restrict__ gates, const int64_t* __restrict__ expert_ids, int64_t tokens,
                           int64_t experts, int64_t k, Score score, bool renormalize, T* __restrict__ grad_logits) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t t = int64_t(blockIdx.x) * kGatingTokensPerBlock + threadIdx.x / kWarp; t < tokens;
       t += int64_t(gridDim.x) * kGatingTokensPerBlock) {
    const float* dg = grad_gates + t * k;
    const float* g = gates + t * k;
    const int64_t* ids = expert_ids + t * k;
    const T* row = logits + t * experts;
    T* out = grad_logits + t * experts;
    float dot = 0.0f, s_sum = 0.0f;
    for (int64_t j = lane; j < k; j += kWarp) {
      dot += dg[j] * g[j];
      if (score == Score::kSigmoid && renormalize) {
        const int64_t e = ids[j];
        if (e >= 0 && e < experts) s_sum += 1.0f / (1.0f + expf(-convert<float>(row[e])));
      }
    }
    dot = warp::sum(dot);
    if (score == Score::kSigmoid && renormalize) s_sum = warp::sum(s_sum);
    // Softmax without renormalize: every expert gets -p_m <dg, g>.
    const bool dense = score == Score::kSoftmax && !renormalize;
    float row_max = -INFINITY, denominator = 1.0f;
    if (dense) {
      for (int64_t m = lane; m < experts; m += kWarp) row_max = fmaxf(row_max, convert<float>(row[m]));
      row_max = warp::max(row_max);
      float sum = 0.0f;
      for (int64_t m = lane; m < experts; m += kWarp) sum += expf(convert<float>(row[m]) - row_max);
      denominator = warp::sum(sum);
    }
    for (int64_t m = lane; m < experts; m += kWarp) {
      out[m] = convert<T>(dense ? -(expf(convert<float>(row[m]) - row_max) / denominator) * dot : 0.0f);
    }
    __syncwarp();
    for (int64_t j = lane; j < k; j += kWarp) {
      const int64_t e = ids[j];
      if (e < 0 || e >= experts) continue;
      float value;
      if (score == Score::kSoftmax) {
        value = renormalize ? g[j] * (dg[j] - dot)
                            : dg[j] * g[j] - (expf(convert<float>(row[e]) - row_max) / denominator) * dot;
      } else {
        const float s = 1.0f / (1.0f + expf(-convert<float>(row[e])));
        const float ds = renormalize ? (dg[j] - dot) / s_sum : dg[j];
        value = ds * s * (1.0f - s);
      }
      out[e] = convert<T>(value);
    }
  }
}

}  // namespace

void topk_gating_backward_launch(const float* grad_gates, const void* logits, DType type, const float* gates,
                                 const int64_t* expert_ids, int64_t tokens, int64_t experts, int64_t k,
                                 gating::Score score, bool renormalize, void* grad_logits, cudaStream_t stream) {
  if (tokens == 0 || experts == 0) return;
  const unsigned grid = grid_for(tokens, kGatingTokensPerBlock, int64_t(1) << 20);
  dispatch<HalfAndFloatTypes>("topk_gating_backward", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gating_backward_kernel<T><<<grid, kWarp * kGatingTokensPerBlock, 0, stream>>>(
        grad_gates, static_cast<const T*>(logits), gates, expert_ids, tokens, experts, k, score, renormalize,
        static_cast<T*>(grad_logits));
  });
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace gpuprim
