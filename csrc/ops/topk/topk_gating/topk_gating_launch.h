// ATen-free interface between topk_gating_cuda.cpp (glue) and topk_gating_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/launch.h"
#include "ops/topk/topk_gating/gating_math.h"

namespace gpuprim {

// The CUDA gating kernels run one warp per token, this many tokens per block.
constexpr int kGatingTokensPerBlock = 8;
static_assert(gating::kLanes == kWarpSize, "the softmax denominator's partial sums are a warp's lanes");

// The fused kernel (one warp per token, logits in registers) takes up to this many experts and k.
constexpr int64_t kGatingFusedMaxExperts = 512;
constexpr int64_t kGatingFusedMaxK = 32;

// Fused router step for contiguous logits [tokens, experts] (fp32/fp16/bf16; tokens, k >= 1,
// experts <= kGatingFusedMaxExperts, k <= kGatingFusedMaxK): gates [tokens, k] fp32 and expert_ids.
void topk_gating_fused_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k,
                              gating::Score score, bool renormalize, float* gates, int64_t* expert_ids,
                              cudaStream_t stream);

// The options of a routed call (topk_gating with bias, groups, scaling or a gate dtype), as the kernel takes them.
struct GatingRoute {
  const float* bias;    // [experts], or nullptr
  int num_groups;       // 0: no group-limited selection; else a divisor of experts
  int topk_groups;      // groups kept, in [1, num_groups]
  float scaling;        // every gate's factor
  bool by_score;        // rank by score + bias (bias or groups given) instead of by logit
  DType gate_type;      // gates' dtype: float32, float16 or bfloat16
};

// The routed kernel (one warp per token, logits in registers) takes up to this many experts (and kGatingFusedMaxK).
constexpr int64_t kGatingRoutedMaxExperts = 1024;

// Fused router step with options (topk_gating_routed_cuda.cu) for contiguous logits [tokens, experts]
// (tokens, k >= 1, experts <= kGatingRoutedMaxExperts, k <= kGatingFusedMaxK): gates [tokens, k] of
// route.gate_type and expert_ids. The same bits as the CPU kernel (topk_gating_routed_cpu.cpp).
void topk_gating_routed_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k,
                               gating::Score score, bool renormalize, const GatingRoute& route, void* gates,
                               int64_t* expert_ids, cudaStream_t stream);

// Gates of already chosen expert_ids [tokens, k] (best first), for any experts and k: the same bits
// as the fused kernel and the CPU kernel.
void topk_gating_gates_launch(const void* logits, DType type, int64_t tokens, int64_t experts, int64_t k,
                              const int64_t* expert_ids, gating::Score score, bool renormalize, float* gates,
                              cudaStream_t stream);

// grad_logits [tokens, experts] (logits' dtype) of the gates, one launch (topk_gating_backward_cuda.cu):
// grad_gates, gates fp32 [tokens, k], expert_ids int64 (distinct in a row), all contiguous.
void topk_gating_backward_launch(const float* grad_gates, const void* logits, DType type, const float* gates,
                                 const int64_t* expert_ids, int64_t tokens, int64_t experts, int64_t k,
                                 gating::Score score, bool renormalize, void* grad_logits, cudaStream_t stream);

}  // namespace gpuprim
