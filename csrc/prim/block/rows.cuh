// Row-wise pieces shared by the MoE permute/unpermute kernels: aligned element packs for 16-byte loads,
// explicitly rounded multiply/add (no FMA contraction, so CUDA sums match the CPU reference bitwise), and the
// grid of a warp-per-row kernel. Warp sums: prim/warp/reduce.cuh (fixed order, each addition rounded on its own).
#pragma once
#include <cstdint>

#include "prim/util/convert.cuh"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace moe {

constexpr int kWarpsPerBlock = kBlockThreads / kWarpSize;

// N elements, one aligned 16-byte (or narrower) load or store: prim/util/vec.cuh's VecOf.
template <typename T, int N>
using Pack = VecOf<N, T>;

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

// Elements per 16-byte pack when the row length and every pointer allow it, else 1.
template <typename T>
inline int pack_width(int64_t row_elements, const void* a, const void* b, const void* c = nullptr) {
  constexpr int full = int(16 / sizeof(T));
  return (row_elements % full == 0 && aligned(a, 16) && aligned(b, 16) && aligned(c, 16)) ? full : 1;
}

constexpr int64_t kMaxBlocks = int64_t(1) << 20;  // the kernels are grid-stride loops: more blocks add nothing

// Blocks for a warp per item.
inline unsigned warp_grid(int64_t items) { return grid_for(items, kWarpsPerBlock, kMaxBlocks); }

}  // namespace moe
}  // namespace gpuprim
