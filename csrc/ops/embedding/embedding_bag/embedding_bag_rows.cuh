// What the bag kernel (embedding_bag_cuda.cu) and the long-bag kernel (embedding_bag_long_cuda.cu) of the
// forward share: the lanes-per-row rule and the load stage (kUnroll rows at once, folded by the caller in order).
#pragma once
#include <cstdint>

#include "ops/embedding/embedding_bag/embedding_bag_launch.h"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace embedding_bag_rows {

constexpr int kUnroll = 4;  // independent row loads in flight per lane

__host__ __device__ __forceinline__ bool used(int64_t index, const EmbeddingBagShape& s) {
  return index >= 0 && index < s.num_weights && index != s.padding_idx;
}

// Lanes per row: the fewest (>= 4) whose Vec-wide loads cover a row, up to a warp.
inline int lanes_per_row(int64_t dim, int vec) {
  int group = kWarpSize;
  while (group > 4 && int64_t(group / 2) * vec >= dim) group /= 2;
  return group;
}

// Positions p .. p + kUnroll - 1 below end: row index (-1 past end), whether it is used, its Vec columns at col.
template <int Vec, typename T>
struct Batch {
  VecOf<Vec, T> rows[kUnroll];
  int64_t r[kUnroll];
  bool ok[kUnroll];

  template <typename I>
  __device__ __forceinline__ void load(const T* __restrict__ weight, const I* __restrict__ indices,
                                       const EmbeddingBagShape& s, int64_t p, int64_t end, int64_t col) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      r[u] = p + u < end ? static_cast<int64_t>(indices[p + u]) : -1;
      ok[u] = used(r[u], s);
      if (ok[u]) rows[u] = load_vec<Vec>(weight + r[u] * s.dim + col);
    }
  }
};

// The used rows of positions [a, e) in position order: kUnroll loaded at once, then fold(u, row, r) for each
// (p + u its position, r its index).
template <int Vec, typename T, typename I, typename Fold>
__device__ __forceinline__ void for_each_row(const T* __restrict__ weight, const I* __restrict__ indices,
                                             const EmbeddingBagShape& s, int64_t a, int64_t e, int64_t col,
                                             Fold&& fold) {
  for (int64_t p = a; p < e; p += kUnroll) {
    Batch<Vec, T> batch;
    batch.load(weight, indices, s, p, e, col);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (batch.ok[u]) fold(p + u, batch.rows[u], batch.r[u]);
    }
  }
}

}  // namespace embedding_bag_rows
}  // namespace gpuprim
