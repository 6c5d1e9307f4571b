// Kernels of gpuprim::topk_gating. The fused path: one warp per token (8 tokens per block), the
// token's logits in registers (expert lane + 32 j in item j), k rounds of a warp-wide argmax of
// (logit key, -expert) to pick the experts best first, then the gates from gating_math.h in the
// CPU kernel's exact order (selected scores added in rank order; the full softmax denominator as
// 32 lane partial sums and a butterfly tree). Reads the logits once and writes 12 bytes per gate.
// The group path, taken first when the full softmax denominator is not needed (renormalize, or
// sigmoid) and k <= 4 * G: G lanes per token (prim/device/topk_rows/short_rows.cuh's selection, the
// same ranking and 16-byte loads, 32-bit rank words checked for ties), then the gates from the picks in
// rank order as above. The warp path stays for softmax without renormalize (its denominator's order is
// fixed by the lane layout); it ranks like the row top-k's warp rows (topk_rows::lane_best).
// The general path (more experts or larger k): gpuprim::topk picks the experts, then
// gates_kernel computes the same gates, one warp per token.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/util/key_codec.cuh"
#include "prim/device/topk_rows/short_rows.cuh"
#include "prim/device/topk_rows/warp_rows.cuh"
#include "ops/topk/topk_gating/gating_loads.cuh"
#include "ops/topk/topk_gating/topk_gating_launch.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace {

using gating::load_logit;
using gating::Score;

constexpr int kWarp = kWarpSize;

// The full softmax denominator sum_e exp(logit_e - max) in the fixed order gating_math.h states:
// lane l adds experts l, l + 32, ... in turn, then a butterfly over the lanes.
__device__ __forceinline__ float warp_softmax_denominator(float partial) { return warp::sum(partial); }

// The gates of lane `lane`'s pick (lanes < k) from its logit; every lane of the warp takes part.
__device__ __forceinline__ float gate_of(float my_logit, float max_logit, int lane, int k, Score score,
                                         bool renormalize, float denominator_if_full) {
  const float raw = lane < k ? gating::raw_score(score, my_logit, max_logit) : 0.0f;
  float selected_sum = 0.0f;
  for (int j = 0; j < k; ++j) selected_sum = __fadd_rn(selected_sum, __shfl_sync(kFullMask, raw, j));
  if (renormalize) return __fdiv_rn(raw, selected_sum);
  if (score == Score::kSoftmax) return __fdiv_rn(raw, denominator_if_full);
  return raw;
}

template <DType kType, int kItems>
__global__ void __launch_bounds__(kWarp* kGatingTokensPerBlock)
    fused_gating_kernel(const void* __restrict__ logits, int64_t tokens, int experts, int k, Score score,
                        bool renormalize, float* __restrict__ gates, int64_t* __restrict__ expert_ids) {
  const int lane = int(threadIdx.x) % kWarp;
  const int64_t warps = int64_t(gridDim.x) * kGatingTokensPerBlock;
  for (int64_t token = int64_t(blockIdx.x) * kGatingTokensPerBlock + threadIdx.x / kWarp; token < tokens;
       token += warps) {  // uniform across the warp
    const int64_t row = token * experts;
    float row_logits[kItems] = {};
    uint32_t keys[kItems] = {};
    uint32_t alive = topk_rows::load_lane_items<kItems>(experts, lane, [&](int j, int expert) {
      row_logits[j] = load_logit<kType>(logits, row + expert);
      keys[j] = gating::logit_key(row_logits[j]);
    });
    const uint32_t present = alive;
    uint32_t best_key, best_expert;
    topk_rows::lane_best(keys, alive, lane, best_key, best_expert);
    uint32_t my_expert = 0;  // lane r: the expert of rank r (r < k)
    // topk_rows::warp_best_rounds written out: through its callback this kernel compiled to slower code.
    for (int rank = 0; rank < k; ++rank) {
      uint32_t key = best_key, expert = best_expert;
      warp::best(key, expert);
      if (lane == rank) my_expert = expert;
      if (int(expert % kWarp) == lane) {
        alive &= ~(1u << (expert / kWarp));
        topk_rows::lane_best(keys, alive, lane, best_key, best_expert);
      }
    }
    const float my_logit = lane < k ? load_logit<kType>(logits, row + my_expert) : 0.0f;
    const float max_logit = __shfl_sync(kFullMask, my_logit, 0);  // rank 0: the row's largest logit
    float denominator = 0.0f;
    if (!renormalize && score == Score::kSoftmax) {
      float partial = 0.0f;
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if ((present >> j) & 1u) partial = __fadd_rn(partial, gating::exp_fp32(__fsub_rn(row_logits[j], max_logit)));
      }
      denominator = warp_softmax_denominator(partial);
    }
    const float gate = gate_of(my_logit, max_logit, lane, k, score, renormalize, denominator);
    if (lane < k) {
      gates[token * k + lane] = gate;
      expert_ids[token * k + lane] = int64_t(my_expert);
    }
  }
}

// Bits of a logit as the float the CPU kernel sees.
template <DType kType, typename Bits>
__device__ __forceinline__ float logit_from_bits(Bits bits) {
  if constexpr (kType == DType::kFloat32) {
    return __uint_as_float(uint32_t(bits));
  } else if constexpr (kType == DType::kFloat16) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
  } else {
    return __uint_as_float(uint32_t(bits) << 16);
  }
}

// G lanes per token (32 / G tokens per warp, loop bounds uniform across the warp). Lane g keeps
// the experts of ranks c * G + g (c < kChunks), then takes part in the rank-order sum of the
// selected scores (renormalize) and writes its ranks' gates and expert ids.
template <DType kType, typename Bits, int kGroup, int kList, int kChunks, bool kFull>
__global__ void __launch_bounds__(short_rows::kRowsThreads, short_rows::kRowsMinBlocks)
    group_gating_kernel(const Bits* __restrict__ logits, int64_t tokens, int experts, int k, bool vector_loads,
                        KeyCodec<Bits> codec, uint32_t position_mask, Score score, bool renormalize,
                        float* __restrict__ gates, int64_t* __restrict__ expert_ids) {
  constexpr int kTokensPerWarp = kWarp / kGroup;
  const int lane = int(threadIdx.x) % kWarp;
  const int g = lane % kGroup;
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / kWarp);
  for (int64_t first = warp * kTokensPerWarp; first < tokens; first += warps * kTokensPerWarp) {
    const int64_t token = first + lane / kGroup;
    const bool active = token < tokens;
    const Bits* row = logits + (active ? token : 0) * experts;
    int picks[kChunks];  // expert of rank c * kGroup + g (-1 past k)
#pragma unroll
    for (int c = 0; c < kChunks; ++c) picks[c] = -1;
    short_rows::select_row<Bits, kGroup, kList, kFull>(row, experts, k, active, vector_loads, g, codec,
                                                       position_mask, [&](int first_rank, int position) {
#pragma unroll
                                                         for (int c = 0; c < kChunks; ++c) {
                                                           if (first_rank == c * kGroup) picks[c] = position;
                                                         }
                                                       });
    float logit[kChunks];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const bool mine = active && c * kGroup + g < k;
      logit[c] = mine ? logit_from_bits<kType>(row[picks[c]]) : 0.0f;
    }
    const float max_logit = __shfl_sync(kFullMask, logit[0], 0, kGroup);  // rank 0: the row's largest logit
    float raw[kChunks];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      raw[c] = c * kGroup + g < k ? gating::raw_score(score, logit[c], max_logit) : 0.0f;
    }
    float selected_sum = 0.0f;  // in rank order, as the CPU kernel
    if (renormalize) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
#pragma unroll
        for (int r = 0; r < kGroup; ++r) {
          const float other = __shfl_sync(kFullMask, raw[c], r, kGroup);
          if (c * kGroup + r < k) selected_sum = __fadd_rn(selected_sum, other);
        }
      }
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int rank = c * kGroup + g;
      if (active && rank < k) {
        gates[token * k + rank] = renormalize ? __fdiv_rn(raw[c], selected_sum) : raw[c];
        expert_ids[token * k + rank] = int64_t(picks[c]);
      }
    }
  }
}

// General path: gates of given expert_ids, one warp per token, any k and number of experts.
template <DType kType>
__global__ void __launch_bounds__(kWarp* kGatingTokensPerBlock)
    gates_kernel(const void* __restrict__ logits, int64_t tokens, int64_t experts, int64_t k,
                 const int64_t* __restrict__ expert_ids, Score score, bool renormalize, float* __restrict__ gates) {
  const int lane = int(threadIdx.x) % kWarp;
  const int64_t warps = int64_t(gridDim.x) * kGatingTokensPerBlock;
  for (int64_t token = int64_t(blockIdx.x) * kGatingTokensPerBlock + threadIdx.x / kWarp; token < tokens;
       token += warps) {
    const int64_t row = token * experts;
    const int64_t* ids = expert_ids + token * k;
    // expert_ids come from gpuprim::topk (in range); clamped anyway so that no read leaves the row.
    const auto expert_at = [&](int64_t j) {
      const int64_t id = ids[j];
      return id < 0 ? int64_t(0) : (id >= experts ? experts - 1 : id);
    };
    const float max_logit = load_logit<kType>(logits, row + expert_at(0));
    float denominator = 1.0f;
    if (renormalize) {
      float selected_sum = 0.0f;  // in rank order, by one lane
      if (lane == 0) {
        for (int64_t j = 0; j < k; ++j) {
          selected_sum += gating::raw_score(score, load_logit<kType>(logits, row + expert_at(j)), max_logit);
        }
      }
      denominator = __shfl_sync(kFullMask, selected_sum, 0);
    } else if (score == Score::kSoftmax) {
      float partial = 0.0f;
      for (int64_t e = lane; e < experts; e += kWarp) {
        partial = __fadd_rn(partial, gating::exp_fp32(__fsub_rn(load_logit<kType>(logits, row + e), max_logit)));
      }
      denominator = warp_softmax_denominator(partial);
    }
    for (int64_t j = lane; j < k; j += kWarp) {
      const float raw = gating::raw_score(score, load_logit<kType>(logits, row + expert_at(j)), max_logit);
      gates[token * k + j] = (renormalize || score == Score::kSoftmax) ? __fdiv_rn(raw, denominator) : raw;
    }
  }
}

// Blocks for `tokens` tokens, a warp each (grid-stride beyond 32 blocks per SM).
unsigned token_grid(int64_t tokens) {
  return grid_for(tokens, kGatingTokensPerBlock, int64_t(current_device_info().sm_count) * 32);
}

// Most picks a lane keeps for a list of kList rank words (short_rows::list_size), capped at 4 chunks.
template <typename Bits>
constexpr int group_chunks(int group, int list) {
  const int max_k = list < short_rows::kItems ? short_rows::list_max_k<Bits>(list) : int(kGatingFusedMaxK);
  const int chunks = (max_k + group - 1) / group;
  return chunks < 4 ? (chunks < 2 ? 1 : (chunks <= 2 ? 2 : 4)) : 4;
}

template <DType kType, typename Bits, int kGroup, int kList>
void launch_group_gating(const void* logits, int64_t tokens, int64_t experts, int64_t k, Bits inf_bits, Score score,
                         bool renormalize, float* gates, int64_t* expert_ids, cudaStream_t stream) {
  const auto* x = static_cast<const Bits*>(logits);
  const KeyCodec<Bits> codec{KeyKind::kFloat, inf_bits, /*descending=*/false};
  constexpr int kChunks = group_chunks<Bits>(kGroup, kList);
  const unsigned grid = short_rows::rows_grid<kGroup>(tokens, current_device_info().sm_count);
  const uint32_t position_mask = short_rows::position_mask<Bits>(experts);
  if constexpr (sizeof(Bits) == 4) {
    if (short_rows::full_rows<Bits, kGroup>(x, experts, codec)) {  // fp32 rows of exactly G * 16 logits
      group_gating_kernel<kType, Bits, kGroup, kList, kChunks, true><<<grid, short_rows::kRowsThreads, 0, stream>>>(
          x, tokens, int(experts), int(k), true, codec, position_mask, score, renormalize, gates, expert_ids);
      GPUPRIM_LAUNCH_CHECK();
      return;
    }
  }
  group_gating_kernel<kType, Bits, kGroup, kList, kChunks, false><<<grid, short_rows::kRowsThreads, 0, stream>>>(
      x, tokens, int(experts), int(k), short_rows::vector_loads_ok(x, experts), codec, position_mask, score,
      renormalize, gates, expert_ids);
  GPUPRIM_LAUNCH_CHECK();
}

// The list sizes short_rows::list_size<Bits> returns: 2, 4, 8, 16 (fp16/bf16: exact words) or
// 2, 3, 5, 9, 16 (fp32).
template <DType kType, typename Bits, int kGroup>
void group_gating_list(const void* logits, int64_t tokens, int64_t experts, int64_t k, Bits inf_bits, Score score,
                       bool renormalize, float* gates, int64_t* expert_ids, cudaStream_t stream) {
  constexpr bool kExact = short_rows::kExactWords<Bits>;
  constexpr int kSizes[4] = {2, kExact ? 4 : 3, kExact ? 8 : 5, kExact ? 8 : 9};  // kSizes[3]: fp32 only
  const int list = short_rows::list_size<Bits>(k);
  if (list == kSizes[0]) {
    return launch_group_gating<kType, Bits, kGroup, kSizes[0]>(logits, tokens, experts, k, inf_bits, score,
                                                               renormalize, gates, expert_ids, stream);
  } else if (list == kSizes[1]) {
    return launch_group_gating<kType, Bits, kGroup, kSizes[1]>(logits, tokens, experts, k, inf_bits, score,
                                                               renormalize, gates, expert_ids, stream);
  } else if (list == kSizes[2]) {
    return launch_group_gating<kType, Bits, kGroup, kSizes[2]>(logits, tokens, experts, k, inf_bits, score,
                                                               renormalize, gates, expert_ids, stream);
  } else if (!kExact && list == kSizes[3]) {
    return launch_group_gating<kType, Bits, kGroup, kSizes[3]>(logits, tokens, experts, k, inf_bits, score,
                                                               renormalize, gates, expert_ids, stream);
  }
  return launch_group_gating<kType, Bits, kGroup, short_rows::kItems>(logits, tokens, experts, k, inf_bits, score,
                                                                      renormalize, gates, expert_ids, stream);
}

// The G-lanes-per-token path, when it applies (see the top of the file); false: not taken.
template <typename T>
bool group_gating(const void* logits, int64_t tokens, int64_t experts, int64_t k, Score score, bool renormalize,
                  float* gates, int64_t* expert_ids, cudaStream_t stream) {
  constexpr DType kType = dtype_of<T>();
  using Bits = KeyBits<T>;
  const int group = short_rows::group_size(experts);
  if (!(renormalize || score == Score::kSigmoid) || experts > short_rows::kMaxRow || k > experts) return false;
  if (k > int64_t(group_chunks<Bits>(group, short_rows::list_size<Bits>(k))) * group) return false;
  short_rows::with_group_size(experts, [&](auto group_tag) {
    group_gating_list<kType, Bits, decltype(group_tag)::value>(logits, tokens, experts, k, KeyOf<T>::kInfBits, score,
                                                                renormalize, gates, expert_ids, stream);
  });
  return true;
}

template <typename T>
void fused_typed(const void* logits, int64_t tokens, int64_t experts, int64_t k, Score score, bool renormalize,
                 float* gates, int64_t* expert_ids, cudaStream_t stream) {
  constexpr DType kType = dtype_of<T>();
  if (group_gating<T>(logits, tokens, experts, k, score, renormalize, gates, expert_ids, stream)) return;
  const unsigned grid = token_grid(tokens);
  const int threads = kWarp * kGatingTokensPerBlock;
  static_assert(kGatingFusedMaxExperts == 16 * kWarp, "the largest register tile");
  dispatch_pow2<1, 16>((experts + kWarp - 1) / kWarp, [&](auto items) {
    fused_gating_kernel<kType, decltype(items)::value><<<grid, threads, 0, stream>>>(
        logits, tokens, int(experts), int(k), score, renormalize, gates, expert_ids);
  });
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void topk_gating_fused_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k, Score score,
                              bool renormalize, float* gates, int64_t* expert_ids, cudaStream_t stream) {
  dispatch<HalfAndFloatTypes>("topk_gating", type, [&](auto tag) {
    fused_typed<typename decltype(tag)::type>(logits, tokens, experts, k, score, renormalize, gates, expert_ids,
                                              stream);
  });
}

void topk_gating_gates_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k,
                              const int64_t* expert_ids, Score score, bool renormalize, float* gates,
                              cudaStream_t stream) {
  dispatch<HalfAndFloatTypes>("topk_gating", type, [&](auto tag) {
    constexpr DType kType = dtype_of<typename decltype(tag)::type>();
    gates_kernel<kType><<<token_grid(tokens), kWarp * kGatingTokensPerBlock, 0, stream>>>(
        logits, tokens, experts, k, expert_ids, score, renormalize, gates);
    GPUPRIM_LAUNCH_CHECK();
  });
}

}  // namespace gpuprim
