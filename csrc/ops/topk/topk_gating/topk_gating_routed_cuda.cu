// Kernel of gpuprim::topk_gating with its options (bias, group-limited selection, scaling, gate dtype); the plain
// call keeps topk_gating_cuda.cu's kernels. One warp per token (8 tokens per block), the token's logits in
// registers (expert lane + 32 j in item j): the full softmax when needed (row max, then the denominator as 32
// lane partial sums and a butterfly, the CPU kernel's order), the ranking keys (score + bias, or the logit),
// each group's score (the top-2 keys of its experts merged across the warp) and the topk_groups best groups
// (ranked like experts: group g is lane g % 32's item g / 32), then k rounds of a warp-wide argmax over the
// experts of the kept groups, and the gates from the picks in rank order, as topk_gating_routed_cpu.cpp.
// Sigmoid routers whose groups are whole lanes take lane_group_gating_kernel (consecutive experts per lane), which
// ranks by a fast sigmoid and falls back to the exact selection for tokens with a close call (screened_selection.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "ops/topk/topk_gating/screened_selection.cuh"
#include "ops/topk/topk_gating/gating_loads.cuh"
#include "ops/topk/topk_gating/topk_gating_launch.h"
#include "prim/device/topk_rows/warp_rows.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace {

using gating::load_logit;
using gating::Score;

constexpr int kWarp = kWarpSize;
constexpr int kMaxItems = int(kGatingRoutedMaxExperts / kWarpSize);
constexpr int kLaneGroupMinBlocks = 5;  // lane-group kernel blocks an SM keeps up to 8 experts a lane (48 registers)

// Logits start .. start + kItems - 1 (one lane's consecutive experts) as kItems * size / 16 16-byte loads where
// kVector (the launch checks the alignment), else one load each: a warp then reads whole lines per instruction.
template <DType kType, int kItems, bool kVector>
__device__ __forceinline__ void load_lane_logits(const void* logits, int64_t start, float (&out)[kItems]) {
  if constexpr (kVector) {
    constexpr int kPerWord = kType == DType::kFloat32 ? 1 : 2;  // elements per 32-bit word
    constexpr int kWords = kItems / kPerWord;
    static_assert(kWords % 4 == 0, "a lane's logits are whole 16-byte vectors");
    const auto* vectors = reinterpret_cast<const uint4*>(static_cast<const char*>(logits) +
                                                         start * int64_t(4 / kPerWord));
    uint32_t words[kWords];
#pragma unroll
    for (int v = 0; v < kWords / 4; ++v) {
      const uint4 vector = vectors[v];
      words[4 * v] = vector.x;
      words[4 * v + 1] = vector.y;
      words[4 * v + 2] = vector.z;
      words[4 * v + 3] = vector.w;
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const uint32_t word = words[j / kPerWord];
      if constexpr (kType == DType::kFloat32) {
        out[j] = __uint_as_float(word);
      } else {
        const unsigned short bits = (j % 2 == 0) ? static_cast<unsigned short>(word & 0xffffu)
                                                 : static_cast<unsigned short>(word >> 16);  // little endian
        out[j] = kType == DType::kFloat16 ? __half2float(__ushort_as_half(bits))
                                          : __uint_as_float(uint32_t(bits) << 16);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) out[j] = load_logit<kType>(logits, start + j);
  }
}

// Whether a lane's kItems consecutive logits fill whole 16-byte vectors.
template <DType kType, int kItems>
constexpr bool lane_vectors_fit() {
  return (kItems * (kType == DType::kFloat32 ? 4 : 2)) % 16 == 0;
}

// A gate rounded to nearest even into the gates' dtype (ATen's conversion on the CPU).
__device__ __forceinline__ void store_gate(void* gates, DType type, int64_t i, float gate) {
  if (type == DType::kFloat16) {
    static_cast<__half*>(gates)[i] = __float2half_rn(gate);
  } else if (type == DType::kBFloat16) {
    static_cast<__nv_bfloat16*>(gates)[i] = __float2bfloat16_rn(gate);
  } else {
    static_cast<float*>(gates)[i] = gate;
  }
}

// Lane r < k holds the expert of rank r: its gate from the unbiased score (softmax over the chosen k shifted by
// their largest logit; the full softmax's probability; or the sigmoid), renormalized in rank order as the CPU
// kernel adds, times scaling, stored in the gates' dtype. Every lane of the warp takes part.
template <DType kType>
__device__ __forceinline__ void write_gates(const void* logits, int64_t row, int64_t token, int k, int lane,
                                            uint32_t my_expert, Score score, bool renormalize, float row_max,
                                            float denominator, const GatingRoute& route, void* gates,
                                            int64_t* expert_ids) {
  const bool mine = lane < k;
  const float my_logit = mine ? load_logit<kType>(logits, row + my_expert) : 0.0f;
  float raw = 0.0f;
  if (score == Score::kSigmoid) {
    raw = mine ? gating::sigmoid_fp32(my_logit) : 0.0f;
  } else if (renormalize) {
    const float selected_max = warp::max(mine ? my_logit : -INFINITY);
    raw = mine ? gating::exp_fp32(__fsub_rn(my_logit, selected_max)) : 0.0f;
  } else {
    raw = mine ? __fdiv_rn(gating::exp_fp32(__fsub_rn(my_logit, row_max)), denominator) : 0.0f;
  }
  float gate = raw;
  if (renormalize) {
    float selected_sum = 0.0f;
    for (int j = 0; j < k; ++j) selected_sum = __fadd_rn(selected_sum, __shfl_sync(kFullMask, raw, j));
    gate = __fdiv_rn(raw, selected_sum);
  }
  if (mine) {
    store_gate(gates, route.gate_type, token * k + lane, __fmul_rn(gate, route.scaling));
    expert_ids[token * k + lane] = int64_t(my_expert);
  }
}

template <DType kType, int kItems>
__global__ void __launch_bounds__(kWarp* kGatingTokensPerBlock)
    routed_gating_kernel(const void* __restrict__ logits, int64_t tokens, int experts, int k, Score score,
                         bool renormalize, GatingRoute route, void* __restrict__ gates,
                         int64_t* __restrict__ expert_ids) {
  const int lane = int(threadIdx.x) % kWarp;
  const bool softmax = score == Score::kSoftmax;
  const int64_t warps = int64_t(gridDim.x) * kGatingTokensPerBlock;
  for (int64_t token = int64_t(blockIdx.x) * kGatingTokensPerBlock + threadIdx.x / kWarp; token < tokens;
       token += warps) {  // uniform across the warp
    const int64_t row = token * experts;
    float values[kItems] = {};  // the logits, then (by_score) the biased scores
    uint32_t keys[kItems] = {};
    const uint32_t present = topk_rows::load_lane_items<kItems>(
        experts, lane, [&](int j, int expert) { values[j] = load_logit<kType>(logits, row + expert); });
    float row_max = -INFINITY, denominator = 1.0f;
    if (softmax && (route.by_score || !renormalize)) {
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if ((present >> j) & 1u) row_max = fmaxf(row_max, values[j]);
      }
      row_max = warp::max(row_max);
      float partial = 0.0f;
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if ((present >> j) & 1u) partial = __fadd_rn(partial, gating::exp_fp32(__fsub_rn(values[j], row_max)));
      }
      denominator = warp::sum(partial);
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (!((present >> j) & 1u)) continue;
      if (route.by_score) {
        const float x = values[j];
        const float s =
            softmax ? __fdiv_rn(gating::exp_fp32(__fsub_rn(x, row_max)), denominator) : gating::sigmoid_fp32(x);
        values[j] = route.bias != nullptr ? __fadd_rn(s, route.bias[lane + j * kWarp]) : s;
      }
      keys[j] = gating::logit_key(values[j]);
    }
    uint32_t alive = present;
    if (route.num_groups > 0) {
      const int group_size = experts / route.num_groups;
      uint32_t group_keys[kItems] = {};
      // Group g's score on every lane (its experts' top-2 keys, merged over the lanes), kept by lane g % 32.
      for (int g = 0; g < route.num_groups; ++g) {  // uniform across the warp
        const int first_expert = g * group_size;
        uint32_t first = 0, second = 0;
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          const int expert = lane + j * kWarp;
          if (((present >> j) & 1u) && expert >= first_expert && expert < first_expert + group_size) {
            gating::keep_top2(keys[j], first, second);
          }
        }
#pragma unroll
        for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
          const uint32_t other_first = __shfl_xor_sync(kFullMask, first, offset);
          const uint32_t other_second = __shfl_xor_sync(kFullMask, second, offset);
          gating::keep_top2(other_first, first, second);
          gating::keep_top2(other_second, first, second);
        }
        const uint32_t group_key = gating::logit_key(gating::top2_sum(first, second));
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          if (lane == g % kWarp && j == g / kWarp) group_keys[j] = group_key;
        }
      }
      // The topk_groups best groups (ties to the lower group), as a bit per item on the owning lane.
      uint32_t groups_alive = topk_rows::load_lane_items<kItems>(route.num_groups, lane, [](int, int) {});
      // topk_rows::warp_best_rounds written out: through its callback this kernel needed more registers.
      uint32_t kept = 0, best_key, best_group;
      topk_rows::lane_best(group_keys, groups_alive, lane, best_key, best_group);
      for (int rank = 0; rank < route.topk_groups; ++rank) {
        uint32_t key = best_key, group = best_group;
        warp::best(key, group);
        if (int(group % kWarp) == lane) {
          kept |= 1u << (group / kWarp);
          groups_alive &= ~(1u << (group / kWarp));
          topk_rows::lane_best(group_keys, groups_alive, lane, best_key, best_group);
        }
      }
      // Every expert asks its group's lane whether the group was kept.
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const int group = ((present >> j) & 1u) ? (lane + j * kWarp) / group_size : 0;
        const uint32_t owner_kept = __shfl_sync(kFullMask, kept, group % kWarp);
        if (!((owner_kept >> (group / kWarp)) & 1u)) alive &= ~(1u << j);
      }
    }
    uint32_t my_expert = 0;  // lane r: the expert of rank r (r < k)
    topk_rows::warp_best_rounds(keys, alive, lane, k, [&](int rank, uint32_t, uint32_t expert) {
      if (lane == rank) my_expert = expert;
    });
    write_gates<kType>(logits, row, token, k, lane, my_expert, score, renormalize, row_max, denominator, route, gates,
                       expert_ids);
  }
}

// The exact group-limited sigmoid selection of one token (the CPU's bits), for the tokens whose screened selection
// had a close call: returns, on lane r < k, the expert of rank r.
template <int kItems>
__device__ __forceinline__ uint32_t exact_selection(const float (&values)[kItems], const float (&bias)[kItems],
                                                    bool present, int lane, int first, int my_group,
                                                    int lanes_per_group, int k, const GatingRoute& route) {
  uint32_t keys[kItems] = {};
  uint32_t top_first = 0, top_second = 0;
  if (present) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const float s = gating::sigmoid_fp32(values[j]);
      keys[j] = gating::logit_key(route.bias != nullptr ? __fadd_rn(s, bias[j]) : s);
      gating::keep_top2(keys[j], top_first, top_second);
    }
  }
  for (int offset = 1; offset < lanes_per_group; offset *= 2) {  // inside the aligned lanes of the group
    const uint32_t other_first = __shfl_xor_sync(kFullMask, top_first, offset);
    const uint32_t other_second = __shfl_xor_sync(kFullMask, top_second, offset);
    gating::keep_top2(other_first, top_first, top_second);
    gating::keep_top2(other_second, top_first, top_second);
  }
  const uint32_t group_key = gating::logit_key(gating::top2_sum(top_first, top_second));
  int better_groups = 0;  // groups ranked above this lane's (ties: the lower group first)
  for (int g = 0; g < route.num_groups; ++g) {
    const uint32_t other = __shfl_sync(kFullMask, group_key, g * lanes_per_group);
    better_groups += (other > group_key || (other == group_key && g < my_group)) ? 1 : 0;
  }
  uint32_t alive = present && better_groups < route.topk_groups ? uint32_t((uint64_t(1) << kItems) - 1) : 0u;
  const auto best_of_lane = [&](uint32_t& best_key, uint32_t& best_expert) {  // lower j wins ties
    best_key = 0;
    best_expert = topk_rows::kNoPosition;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (((alive >> j) & 1u) && (best_expert == topk_rows::kNoPosition || keys[j] > best_key)) {
        best_key = keys[j];
        best_expert = uint32_t(first + j);
      }
    }
  };
  uint32_t best_key, best_expert;
  best_of_lane(best_key, best_expert);
  uint32_t my_expert = 0;  // lane r: the expert of rank r (r < k)
  for (int rank = 0; rank < k; ++rank) {
    uint32_t key = best_key, expert = best_expert;
    warp::best(key, expert);
    if (lane == rank) my_expert = expert;
    if (int(expert / kItems) == lane) {
      alive &= ~(1u << (expert % kItems));
      best_of_lane(best_key, best_expert);
    }
  }
  return my_expert;
}

// The sigmoid router with groups of whole lanes (DeepSeek-V3's 256 experts in 8 groups): lane l holds the
// kItems consecutive experts l * kItems + j, so a group is an aligned power-of-two set of lanes and its top-2
// merge takes log2(lanes per group) shuffles; each lane then ranks its group among all groups (one shuffle per
// group) instead of topk_groups argmax rounds. The selection is screened (screen::select), and exact_selection
// ranks the tokens it cannot decide: the same selection and gates as the kernel above.
template <DType kType, int kItems, bool kVector>
__global__ void __launch_bounds__(kWarp* kGatingTokensPerBlock, kItems <= 8 ? kLaneGroupMinBlocks : 1)
    lane_group_gating_kernel(const void* __restrict__ logits, int64_t tokens, int experts, int k, bool renormalize,
                             GatingRoute route, int lanes_per_group, void* __restrict__ gates,
                             int64_t* __restrict__ expert_ids) {
  const int lane = int(threadIdx.x) % kWarp;
  const int first = lane * kItems;
  const bool present = first < experts;  // experts is a multiple of kItems: whole lanes
  const int my_group = lane / lanes_per_group;
  float bias[kItems] = {};  // the same for every token: read once
  if (present && route.bias != nullptr) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) bias[j] = route.bias[first + j];
  }
  float max_abs_bias = 0.0f;
#pragma unroll
  for (int j = 0; j < kItems; ++j) max_abs_bias = fmaxf(max_abs_bias, fabsf(bias[j]));
  const screen::Bounds bounds = screen::bounds_for<kItems>(warp::max(max_abs_bias));
  const int64_t warps = int64_t(gridDim.x) * kGatingTokensPerBlock;
  for (int64_t token = int64_t(blockIdx.x) * kGatingTokensPerBlock + threadIdx.x / kWarp; token < tokens;
       token += warps) {  // uniform across the warp
    const int64_t row = token * experts;
    float values[kItems] = {};
    if (present) load_lane_logits<kType, kItems, kVector>(logits, row + first, values);
    uint32_t my_expert = 0;  // lane r: the expert of rank r (r < k)
    if (!screen::select<kItems>(values, bias, present, lane, first, lanes_per_group, route.num_groups,
                                route.topk_groups, k, bounds, my_expert)) {
      my_expert = exact_selection<kItems>(values, bias, present, lane, first, my_group, lanes_per_group, k, route);
    }
    write_gates<kType>(logits, row, token, k, lane, my_expert, Score::kSigmoid, renormalize, 0.0f, 1.0f, route, gates,
                       expert_ids);
  }
}

}  // namespace

void topk_gating_routed_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k, Score score,
                               bool renormalize, const GatingRoute& route, void* gates, int64_t* expert_ids,
                               cudaStream_t stream) {
  const unsigned grid = grid_for(tokens, kGatingTokensPerBlock, int64_t(current_device_info().sm_count) * 32);
  dispatch<HalfAndFloatTypes>("topk_gating", type, [&](auto tag) {
    constexpr DType kType = dtype_of<typename decltype(tag)::type>();
    dispatch_pow2<1, kMaxItems>((experts + kWarp - 1) / kWarp, [&](auto items) {
      constexpr int kItems = decltype(items)::value;
      const int64_t group_size = route.num_groups > 0 ? experts / route.num_groups : 0;
      const int64_t lanes_per_group = group_size / kItems;
      if (score == Score::kSigmoid && group_size > 0 && group_size % kItems == 0 &&
          (lanes_per_group & (lanes_per_group - 1)) == 0) {
        auto launch = [&](auto kernel) {
          kernel<<<grid, kWarp * kGatingTokensPerBlock, 0, stream>>>(
              logits, tokens, int(experts), int(k), renormalize, route, int(lanes_per_group), gates, expert_ids);
        };
        const int64_t row_bytes = experts * int64_t(kType == DType::kFloat32 ? 4 : 2);
        if constexpr (lane_vectors_fit<kType, kItems>()) {
          if (row_bytes % 16 == 0 && aligned(logits, 16)) {
            launch(lane_group_gating_kernel<kType, kItems, true>);
          } else {
            launch(lane_group_gating_kernel<kType, kItems, false>);
          }
        } else {
          launch(lane_group_gating_kernel<kType, kItems, false>);
        }
      } else {
        routed_gating_kernel<kType, kItems><<<grid, kWarp * kGatingTokensPerBlock, 0, stream>>>(
            logits, tokens, int(experts), int(k), score, renormalize, route, gates, expert_ids);
      }
    });
  });
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace gpuprim
