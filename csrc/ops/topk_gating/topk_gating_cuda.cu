// Kernels of gpuprim::topk_gating. The fused path: one warp per token (8 tokens per block), the
// token's logits in registers (expert lane + 32 j in item j), k rounds of a warp-wide argmax of
// (logit key, -expert) to pick the experts best first, then the gates from gating_math.h in the
// CPU kernel's exact order (selected scores added in rank order; the full softmax denominator as
// 32 lane partial sums and a butterfly tree). Reads the logits once and writes 12 bytes per gate.
// The general path (more experts or larger k): gpuprim::topk picks the experts, then
// gates_kernel computes the same gates, one warp per token.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "common/cuda_check.h"
#include "common/device_info.h"
#include "ops/topk_gating/topk_gating_launch.h"

namespace gpuprim {
namespace {

using gating::Score;

constexpr int kWarp = gating::kLanes;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kTokensPerBlock = 8;
constexpr uint32_t kNoExpert = 0xFFFFFFFFu;

// Logit loads, exactly as the CPU's conversions to float.
template <DType kType>
__device__ __forceinline__ float load_logit(const void* logits, int64_t i) {
  if constexpr (kType == DType::kFloat32) {
    return static_cast<const float*>(logits)[i];
  } else if constexpr (kType == DType::kFloat16) {
    return __half2float(__ushort_as_half(static_cast<const unsigned short*>(logits)[i]));
  } else {
    return __uint_as_float(uint32_t(static_cast<const unsigned short*>(logits)[i]) << 16);
  }
}

__device__ __forceinline__ void warp_best(uint32_t& key, uint32_t& expert) {
#pragma unroll
  for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
    const uint32_t other_key = __shfl_xor_sync(kFullMask, key, offset);
    const uint32_t other_expert = __shfl_xor_sync(kFullMask, expert, offset);
    if (other_key > key || (other_key == key && other_expert < expert)) {
      key = other_key;
      expert = other_expert;
    }
  }
}

template <int kItems>
__device__ __forceinline__ void lane_best(const uint32_t (&keys)[kItems], uint32_t alive, int lane, uint32_t& key,
                                          uint32_t& expert) {
  key = 0;
  expert = kNoExpert;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if (((alive >> j) & 1u) && (expert == kNoExpert || keys[j] > key)) {
      key = keys[j];
      expert = uint32_t(lane + j * kWarp);
    }
  }
}

// The full softmax denominator sum_e exp(logit_e - max) in the fixed order gating_math.h states:
// lane l adds experts l, l + 32, ... in turn, then a butterfly over the lanes.
__device__ __forceinline__ float warp_softmax_denominator(float partial) {
#pragma unroll
  for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
    partial = __fadd_rn(partial, __shfl_xor_sync(kFullMask, partial, offset));
  }
  return partial;
}

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
__global__ void __launch_bounds__(kWarp* kTokensPerBlock)
    fused_gating_kernel(const void* __restrict__ logits, int64_t tokens, int experts, int k, Score score,
                        bool renormalize, float* __restrict__ gates, int64_t* __restrict__ expert_ids) {
  const int lane = int(threadIdx.x) % kWarp;
  const int64_t warps = int64_t(gridDim.x) * kTokensPerBlock;
  for (int64_t token = int64_t(blockIdx.x) * kTokensPerBlock + threadIdx.x / kWarp; token < tokens;
       token += warps) {  // uniform across the warp
    const int64_t row = token * experts;
    float row_logits[kItems];
    uint32_t keys[kItems];
    uint32_t alive = 0;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int expert = lane + j * kWarp;
      row_logits[j] = 0.0f;
      keys[j] = 0;
      if (expert < experts) {
        row_logits[j] = load_logit<kType>(logits, row + expert);
        keys[j] = gating::logit_key(row_logits[j]);
        alive |= 1u << j;
      }
    }
    const uint32_t present = alive;
    uint32_t best_key, best_expert;
    lane_best(keys, alive, lane, best_key, best_expert);
    uint32_t my_expert = 0;  // lane r: the expert of rank r (r < k)
    for (int rank = 0; rank < k; ++rank) {
      uint32_t key = best_key, expert = best_expert;
      warp_best(key, expert);
      if (lane == rank) my_expert = expert;
      if (int(expert % kWarp) == lane) {
        alive &= ~(1u << (expert / kWarp));
        lane_best(keys, alive, lane, best_key, best_expert);
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

// General path: gates of given expert_ids, one warp per token, any k and number of experts.
template <DType kType>
__global__ void __launch_bounds__(kWarp* kTokensPerBlock)
    gates_kernel(const void* __restrict__ logits, int64_t tokens, int64_t experts, int64_t k,
                 const int64_t* __restrict__ expert_ids, Score score, bool renormalize, float* __restrict__ gates) {
  const int lane = int(threadIdx.x) % kWarp;
  const int64_t warps = int64_t(gridDim.x) * kTokensPerBlock;
  for (int64_t token = int64_t(blockIdx.x) * kTokensPerBlock + threadIdx.x / kWarp; token < tokens; token += warps) {
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

unsigned grid_for(int64_t tokens) {
  const int64_t limit = int64_t(current_device_info().sm_count) * 32;
  return static_cast<unsigned>(std::clamp<int64_t>((tokens + kTokensPerBlock - 1) / kTokensPerBlock, 1, limit));
}

template <DType kType>
void fused_typed(const void* logits, int64_t tokens, int64_t experts, int64_t k, Score score, bool renormalize,
                 float* gates, int64_t* expert_ids, cudaStream_t stream) {
  const unsigned grid = grid_for(tokens);
  const int threads = kWarp * kTokensPerBlock;
  const int e = int(experts), kk = int(k);
  if (experts <= 1 * kWarp) {
    fused_gating_kernel<kType, 1>
        <<<grid, threads, 0, stream>>>(logits, tokens, e, kk, score, renormalize, gates, expert_ids);
  } else if (experts <= 2 * kWarp) {
    fused_gating_kernel<kType, 2>
        <<<grid, threads, 0, stream>>>(logits, tokens, e, kk, score, renormalize, gates, expert_ids);
  } else if (experts <= 4 * kWarp) {
    fused_gating_kernel<kType, 4>
        <<<grid, threads, 0, stream>>>(logits, tokens, e, kk, score, renormalize, gates, expert_ids);
  } else if (experts <= 8 * kWarp) {
    fused_gating_kernel<kType, 8>
        <<<grid, threads, 0, stream>>>(logits, tokens, e, kk, score, renormalize, gates, expert_ids);
  } else {
    static_assert(kGatingFusedMaxExperts == 16 * kWarp, "the largest register tile");
    fused_gating_kernel<kType, 16>
        <<<grid, threads, 0, stream>>>(logits, tokens, e, kk, score, renormalize, gates, expert_ids);
  }
  GPUPRIM_LAUNCH_CHECK();
}

template <DType kType>
void gates_typed(const void* logits, int64_t tokens, int64_t experts, int64_t k, const int64_t* expert_ids, Score score,
                 bool renormalize, float* gates, cudaStream_t stream) {
  gates_kernel<kType><<<grid_for(tokens), kWarp * kTokensPerBlock, 0, stream>>>(logits, tokens, experts, k, expert_ids,
                                                                                score, renormalize, gates);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void topk_gating_fused_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k, Score score,
                              bool renormalize, float* gates, int64_t* expert_ids, cudaStream_t stream) {
  switch (type) {
    case DType::kFloat32:
      return fused_typed<DType::kFloat32>(logits, tokens, experts, k, score, renormalize, gates, expert_ids, stream);
    case DType::kFloat16:
      return fused_typed<DType::kFloat16>(logits, tokens, experts, k, score, renormalize, gates, expert_ids, stream);
    case DType::kBFloat16:
      return fused_typed<DType::kBFloat16>(logits, tokens, experts, k, score, renormalize, gates, expert_ids, stream);
    default:
      throw std::runtime_error("gpuprim.topk_gating: unsupported dtype");
  }
}

void topk_gating_gates_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k,
                              const int64_t* expert_ids, Score score, bool renormalize, float* gates,
                              cudaStream_t stream) {
  switch (type) {
    case DType::kFloat32:
      return gates_typed<DType::kFloat32>(logits, tokens, experts, k, expert_ids, score, renormalize, gates, stream);
    case DType::kFloat16:
      return gates_typed<DType::kFloat16>(logits, tokens, experts, k, expert_ids, score, renormalize, gates, stream);
    case DType::kBFloat16:
      return gates_typed<DType::kBFloat16>(logits, tokens, experts, k, expert_ids, score, renormalize, gates, stream);
    default:
      throw std::runtime_error("gpuprim.topk_gating: unsupported dtype");
  }
}

}  // namespace gpuprim
