// A screened group-limited sigmoid selection for lane_group_gating_kernel: the token's experts ranked by a cheap
// sigmoid (hardware exp2 and reciprocal) whose error against the exact one (gating_math.h, the CPU's bits) has a
// proven bound, and accepted only when every decision it made - which groups are kept, which experts are chosen
// and their order - holds with a margin of more than twice that bound. An accepted selection is then the exact
// selection; any close call (ties, saturated scores, NaN, inf) returns false and the caller ranks the token
// exactly. The exact sigmoid is computed only for the k chosen experts (their gates).
//
// Experts are ranked with 32-bit words, one redux.sync a round: the key's distance below the token's best key
// in fixed point (kScale steps per unit, up to 4 units) above the expert's complement (larger word = larger key,
// ties to the lower expert). Each lane sorts its words once and pops its head when it wins a round.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/topk/topk_gating/gating_math.h"
#include "prim/util/launch.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace screen {

// |fast sigmoid - exact sigmoid| < kSigmoidError for every float input: a relative error e of t = exp(-x) moves
// s = 1 / (1 + t) by s (1 - s) e <= e / 4, so the product x * log2(e) (~1.3e-8 after that damping), ex2.approx
// (2 ulp: ~6e-8), 1 + t (~6e-8), rcp.approx (1 ulp: ~1.2e-7) and the exact sigmoid's own roundings (~1.8e-7)
// add up to about 4.3e-7, bounded here by twice that.
constexpr float kSigmoidError = 0x1p-20f;

// 1 / (1 + 2^(-x log2 e)) with the hardware's approximate exp2 and reciprocal (x < -88: 0, x > 88: 1, NaN: NaN).
__device__ __forceinline__ float fast_sigmoid(float x) {
  float t, s;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(__fmul_rn(x, -1.44269502162933349609375f)));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(s) : "f"(__fadd_rn(1.0f, t)));
  return s;
}

constexpr int log2_of(int power_of_two) { return power_of_two > 1 ? 1 + log2_of(power_of_two / 2) : 0; }

// The ranking word's layout for lanes of kItems experts.
template <int kItems>
struct Word {
  static constexpr int kIndexBits = 5 + log2_of(kItems);  // experts < 32 * kItems
  static constexpr int kScaleLog2 = 32 - kIndexBits - 2;  // 4 units of distance in the step field
  static constexpr uint32_t kIndexMask = (1u << kIndexBits) - 1u;
  static constexpr uint32_t kStepField = (1u << (32 - kIndexBits)) - 1u;  // steps <= kStepField - 1: words > 0
};

// Margins derived once per warp from the largest |bias| (every key is within 1 + max|bias| of zero).
struct Bounds {
  float key_error;     // |fast key - exact key|: the sigmoid's error plus both keys' rounding
  uint32_t min_steps;  // fixed-point steps two consecutive ranked words must be apart to be an exact decision
};

template <int kItems>
__device__ __forceinline__ Bounds bounds_for(float max_abs_bias) {
  constexpr int kScaleLog2 = Word<kItems>::kScaleLog2;
  const float key_error = kSigmoidError + __fmul_rn(__fadd_rn(1.0f, max_abs_bias), 0x1p-22f);
  // Two keys differ by more than 2 key_error when their steps differ by more than (2 key_error + the
  // subtraction's own error 2^-21) * scale + 1 (each step count is a floor).
  const float steps = __fmul_rn(__fadd_rn(__fmul_rn(2.0f, key_error), 0x1p-21f), float(1 << kScaleLog2));
  const uint32_t min_steps = steps < 1e9f ? uint32_t(ceilf(steps)) + 2u : 0xFFFFFFFFu;  // inf / NaN bias: never
  return {key_error, min_steps};
}

// Keeps the two largest values seen (first >= second), -inf for none.
__device__ __forceinline__ void keep_top2(float value, float& first, float& second) {
  if (value > first) {
    second = first;
    first = value;
  } else if (value > second) {
    second = value;
  }
}

// Sorts kItems words, largest first (a bitonic network: no branches, no local memory).
template <int kItems>
__device__ __forceinline__ void sort_descending(uint32_t (&words)[kItems]) {
#pragma unroll
  for (int size = 2; size <= kItems; size *= 2) {
#pragma unroll
    for (int stride = size / 2; stride > 0; stride /= 2) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int partner = i ^ stride;
        if (partner > i) {
          const uint32_t a = words[i], b = words[partner];
          const bool descending = (i & size) == 0;
          words[i] = descending ? ::max(a, b) : ::min(a, b);
          words[partner] = descending ? ::min(a, b) : ::max(a, b);
        }
      }
    }
  }
}

// The screened selection of one token (every lane calls it; the result is the same on every lane). Lane l holds
// the logits and biases of experts first_expert .. first_expert + kItems - 1 (present: it has experts), a group
// is an aligned set of lanes_per_group lanes. On success lane r < k holds the expert of rank r in my_expert.
template <int kItems>
__device__ __forceinline__ bool select(const float (&logits)[kItems], const float (&bias)[kItems], bool present,
                                       int lane, int first_expert, int lanes_per_group, int num_groups, int topk_groups,
                                       int k, const Bounds& bounds, uint32_t& my_expert) {
  constexpr int kIndexBits = Word<kItems>::kIndexBits;
  constexpr int kScaleLog2 = Word<kItems>::kScaleLog2;
  constexpr uint32_t kIndexMask = Word<kItems>::kIndexMask;
  constexpr uint32_t kStepField = Word<kItems>::kStepField;
  float keys[kItems];
  float first = -INFINITY, second = -INFINITY;
  bool finite = true;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    keys[j] = __fadd_rn(fast_sigmoid(logits[j]), bias[j]);
    finite = finite && fabsf(keys[j]) < INFINITY;  // false for NaN
    keep_top2(keys[j], first, second);
  }
  if (!present) {
    finite = true;
    first = second = -INFINITY;
  }
  if (!__all_sync(kFullMask, finite)) return false;
  for (int offset = 1; offset < lanes_per_group; offset *= 2) {  // the group's top-2 inside its aligned lanes
    const float other_first = __shfl_xor_sync(kFullMask, first, offset);
    const float other_second = __shfl_xor_sync(kFullMask, second, offset);
    keep_top2(other_first, first, second);
    keep_top2(other_second, first, second);
  }
  const float group_score = second == -INFINITY ? first : __fadd_rn(first, second);
  const int my_group = lane / lanes_per_group;
  int better_groups = 0;
  for (int g = 0; g < num_groups; ++g) {
    const float other = __shfl_sync(kFullMask, group_score, g * lanes_per_group);
    better_groups += (other > group_score || (other == group_score && g < my_group)) ? 1 : 0;
  }
  const bool kept = present && better_groups < topk_groups;
  if (topk_groups < num_groups) {  // the weakest kept group must beat the strongest dropped one by the margin
    const float weakest = gating::key_value(warp::min_u32(kept ? gating::logit_key(group_score) : 0xFFFFFFFFu));
    const float strongest = gating::key_value(warp::max_u32(present && !kept ? gating::logit_key(group_score) : 0u));
    // a group score is a sum of two keys (2 key errors) rounded once (at most one more)
    const float margin =
        __fadd_rn(__fmul_rn(6.0f, bounds.key_error), __fmul_rn(__fadd_rn(fabsf(weakest), fabsf(strongest)), 0x1p-21f));
    if (!(__fsub_rn(weakest, strongest) > margin)) return false;
  }
  const float best = gating::key_value(warp::max_u32(present ? gating::logit_key(first) : 0u));
  uint32_t words[kItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const uint32_t steps =
        ::min(__float2uint_rd(__fmul_rn(__fsub_rn(best, keys[j]), float(1 << kScaleLog2))), kStepField - 1u);
    words[j] = kept ? ((kStepField - steps) << kIndexBits) | (kIndexMask - uint32_t(first_expert + j)) : 0u;
  }
  sort_descending(words);
  // k + 1 rounds: round k only measures the margin to the best expert left out. Each decision's margin is kept
  // and checked once at the end (no branch a round).
  uint32_t previous_steps = 0, closest = 0xFFFFFFFFu;
  bool short_of_k = false;  // fewer than k experts in the kept groups: ranked exactly instead
  for (int rank = 0; rank <= k; ++rank) {
    const uint32_t word = warp::max_u32(words[0]);
    const uint32_t steps = kStepField - (word >> kIndexBits);
    if (rank > 0 && word != 0u) closest = ::min(closest, steps - previous_steps);
    short_of_k = short_of_k || (word == 0u && rank < k);
    previous_steps = steps;
    if (rank < k) {
      const uint32_t expert = kIndexMask - (word & kIndexMask);
      if (lane == rank) my_expert = expert;
      const bool owner = word != 0u && int(expert) / kItems == lane;
#pragma unroll
      for (int j = 0; j + 1 < kItems; ++j) words[j] = owner ? words[j + 1] : words[j];
      words[kItems - 1] = owner ? 0u : words[kItems - 1];
    }
  }
  return !short_of_k && closest >= bounds.min_steps;
}

}  // namespace screen
}  // namespace gpuprim
