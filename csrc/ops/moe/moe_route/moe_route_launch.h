// ATen-free interface between moe_route_cuda.cpp (glue) and moe_route_cuda.cu (kernels), plus the score key
// shared by the CPU and CUDA kernels (so both order gates identically).
#pragma once
#include <cstdint>
#include <cstring>

#include "prim/util/input_error.cuh"
#include "prim/util/workspace.h"
#include "prim/util/stream.h"

#if defined(__CUDACC__)
#define GPUPRIM_MOE_HD __host__ __device__ __forceinline__
#else
#define GPUPRIM_MOE_HD inline
#endif

namespace gpuprim {

enum class MoeDrop : int8_t { kPosition, kScore };

// Unsigned key whose ascending order is descending gate order: the highest gate has the smallest key.
// -0.0 equals +0.0; every NaN gets the largest key (dropped first). Ties are broken by the caller (token order).
GPUPRIM_MOE_HD uint32_t moe_score_key(float gate) {
  uint32_t bits;
  memcpy(&bits, &gate, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;  // NaN
  if ((bits & 0x7fffffffu) == 0u) bits = 0u;                   // -0.0 -> +0.0
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return ~ascending;
}

struct MoeRouteShape {
  int64_t tokens, k, num_experts;
  int64_t capacity;  // < 0: no capacity
  int64_t pad_to;
  int64_t rows;      // R, the fixed size of token_ids
  MoeDrop drop;
  InputCheck expert_ids_check;  // where an id outside [0, E) is recorded (it is routed nowhere)
};

// expert_ids: int64 [tokens * k]; gates: fp32 [tokens * k] (read only for MoeDrop::kScore with a capacity).
// Writes counts [E], offsets [E + 1], slots [tokens * k], token_ids [rows], num_dropped [1] (all int64).
// No host sync; tokens * k must be < 2^31 (checked by the glue).
void moe_route_metadata_cuda_launch(const int64_t* expert_ids, const float* gates, MoeRouteShape shape,
                                    int64_t* counts, int64_t* offsets, int64_t* slots, int64_t* token_ids,
                                    int64_t* num_dropped, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
