// Deterministic segmented reduction of the rows of a [outer, rows, inner] tensor over CSR segments.
//
// Work is cut into chunks of at most `chunk_rows` rows of one segment (an empty segment is one empty chunk),
// so a giant segment spreads over many blocks just like many small segments do:
//   count_chunks_kernel  chunks (and partial rows) per segment            -> CUB inclusive scan (integers)
//   chunk_map_kernel     the segment of every chunk (binary search in the scanned counts)
//   chunk_kernel         one block per (chunk, column tile): a segment of one chunk is finished and stored;
//                        a longer one stores its chunk's partial result in workspace
//   combine_kernel       folds the partials of each long segment in chunk order and stores it
// Inside a block, thread (rt, ct) folds rows rt, rt + row_threads, ... of its `Vec` columns in row order, then
// the row_threads partial values meet in a fixed tree. Every order depends only on the shape, never on timing
// or on the GPU: results are bitwise reproducible, and no float atomics are used. No host sync.
#pragma once
#include <cuda/std/limits>
#include <cstdint>

#include "prim/util/cuda_check.h"
#include "prim/util/cub.cuh"
#include "prim/device/segmented_reduce/segment_offsets.h"
#include "prim/util/convert.cuh"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace segmented {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;             // independent row loads in flight per thread
constexpr int kMaxVecBytes = 32;       // Vec * sizeof(Acc) at most (fp16: 8 columns of fp32)
// Chunks are at least kMinChunkElements elements of one column tile (amortizes the per-chunk lookups), and
// long enough that rows / chunk_rows <= kTargetChunks: ~2 waves of 256-thread blocks on an H200 (132 SMs x 8),
// so one giant segment still fills the GPU, while its partials (<= 2 * kTargetChunks rows) stay cheap to fold.
constexpr int64_t kMinChunkElements = int64_t(1) << 16;
constexpr int64_t kTargetChunks = 2048;

struct SumOp {
  template <typename A> __device__ static A identity() { return A(0); }
  template <typename A> __device__ static A apply(A a, A b) { return a + b; }
};
// max/min propagate NaN (torch.amax): a NaN running value stays, a NaN operand replaces it.
struct MaxOp {
  template <typename A> __device__ static A identity() { return -::cuda::std::numeric_limits<A>::infinity(); }
  template <typename A> __device__ static A apply(A a, A b) { return (a != a || a > b) ? a : b; }
};
struct MinOp {
  template <typename A> __device__ static A identity() { return ::cuda::std::numeric_limits<A>::infinity(); }
  template <typename A> __device__ static A apply(A a, A b) { return (a != a || a < b) ? a : b; }
};

// Thread layout of one block over a column tile: col_threads threads side by side, each `vec` columns wide,
// row_threads such rows of threads. chunk_kernel runs with col_threads * row_threads threads (maybe fewer than
// kThreads, for short segments); combine_kernel always with kThreads.
struct Tiling {
  int vec;            // columns per thread load (a power of two dividing inner; 16 bytes at most)
  int col_threads;    // power of two; col_threads * row_threads == the block size (<= kThreads)
  int row_threads;    // power of two
  int64_t col_tiles;  // ceil(inner / (col_threads * vec))
};

struct ChunkCounts {
  int64_t chunks;    // chunks of the segment (>= 1)
  int64_t partials;  // partial rows it writes: its chunks when there are several, else 0
};
struct ChunkCountsPlus {
  __host__ __device__ ChunkCounts operator()(const ChunkCounts& a, const ChunkCounts& b) const {
    return {a.chunks + b.chunks, a.partials + b.partials};
  }
};

struct Plan {
  int64_t outer, rows, inner, segments;
  int64_t chunk_rows;
  int64_t chunk_bound;    // >= total chunks for valid offsets: segments + rows / chunk_rows
  int64_t partial_bound;  // >= total partial rows for valid offsets: 2 * (rows / chunk_rows)
};

// Folds rows [row_begin, row_end) (stride `row_stride` elements) of the thread's Vec columns at `column`
// (skipped when !active), then the block's row_threads values in a fixed tree. Threads with rt == 0 return the
// block's result in acc. Must be called by the whole block (it synchronizes).
template <typename In, typename Acc, typename Op, int Vec>
__device__ __forceinline__ void block_fold_rows(const In* base, int64_t row_stride, int64_t column, bool active,
                                                int64_t row_begin, int64_t row_end, const Tiling& tiling, int rt,
                                                Acc (&acc)[Vec], Acc* shared) {
#pragma unroll
  for (int j = 0; j < Vec; ++j) acc[j] = Op::template identity<Acc>();
  if (active) {
    const int64_t step = tiling.row_threads;
    int64_t r = row_begin + rt;
    for (; r + (kUnroll - 1) * step < row_end; r += kUnroll * step) {
      VecOf<Vec, In> v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = load_vec<Vec>(base + (r + u * step) * row_stride + column);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int j = 0; j < Vec; ++j) acc[j] = Op::apply(acc[j], convert<Acc>(v[u].items[j]));
      }
    }
    for (; r < row_end; r += step) {
      const VecOf<Vec, In> v = load_vec<Vec>(base + r * row_stride + column);
#pragma unroll
      for (int j = 0; j < Vec; ++j) acc[j] = Op::apply(acc[j], convert<Acc>(v.items[j]));
    }
  }
  if (tiling.row_threads == 1) return;  // uniform: nothing to combine, no shared memory used
  Acc* mine = shared + threadIdx.x * Vec;
#pragma unroll
  for (int j = 0; j < Vec; ++j) mine[j] = acc[j];
  for (int half = tiling.row_threads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (rt < half) {
      const Acc* other = shared + (threadIdx.x + half * tiling.col_threads) * Vec;
#pragma unroll
      for (int j = 0; j < Vec; ++j) mine[j] = Op::apply(mine[j], other[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < Vec; ++j) acc[j] = mine[j];
  __syncthreads();  // shared is reused by the caller's next fold
}

// Final value of a segment: empty segments give 0 for every reduction; mean divides by the row count.
template <typename Acc, typename Out, int Vec>
__device__ __forceinline__ void store_final(Out* out, const Acc (&acc)[Vec], int64_t count, bool mean) {
#pragma unroll
  for (int j = 0; j < Vec; ++j) {
    Acc value = count == 0 ? Acc(0) : acc[j];
    if (mean && count > 0) value = value / static_cast<Acc>(count);
    out[j] = convert<Out>(value);
  }
}

__global__ void __launch_bounds__(kThreads) count_chunks_kernel(const int64_t* __restrict__ offsets, Plan plan,
                                                                ChunkCounts* __restrict__ counts) {
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < plan.segments;
       s += int64_t(gridDim.x) * blockDim.x) {
    int64_t lo, hi;
    segment_bounds(offsets, s, plan.rows, lo, hi);
    const int64_t length = hi - lo;
    const int64_t chunks = length == 0 ? 1 : (length + plan.chunk_rows - 1) / plan.chunk_rows;
    counts[s] = ChunkCounts{chunks, chunks > 1 ? chunks : 0};
  }
}

// chunk_segment[c] = the segment of chunk c, for c < min(total chunks, chunk_bound).
__global__ void __launch_bounds__(kThreads) chunk_map_kernel(const ChunkCounts* __restrict__ prefix, Plan plan,
                                                             int64_t* __restrict__ chunk_segment) {
  const int64_t total = prefix[plan.segments - 1].chunks;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < plan.chunk_bound && c < total;
       c += int64_t(gridDim.x) * blockDim.x) {
    int64_t first = 0, last = plan.segments;  // first s with prefix[s].chunks > c
    while (first < last) {
      const int64_t mid = first + (last - first) / 2;
      if (prefix[mid].chunks > c) last = mid; else first = mid + 1;
    }
    chunk_segment[c] = first;
  }
}

template <typename In, typename Acc, typename Out, typename Op, int Vec>
__global__ void __launch_bounds__(kThreads) chunk_kernel(const In* __restrict__ src,
                                                         const int64_t* __restrict__ offsets,
                                                         const ChunkCounts* __restrict__ prefix,
                                                         const int64_t* __restrict__ chunk_segment, Plan plan,
                                                         Tiling tiling, bool mean, Out* __restrict__ out,
                                                         Acc* __restrict__ partials) {
  __shared__ alignas(16) unsigned char shared_raw[kThreads * kMaxVecBytes];
  Acc* shared = reinterpret_cast<Acc*>(shared_raw);
  const int ct = threadIdx.x % tiling.col_threads, rt = threadIdx.x / tiling.col_threads;
  const int64_t total_chunks = prefix[plan.segments - 1].chunks;
  const int64_t work = plan.outer * plan.chunk_bound * tiling.col_tiles;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int64_t tile = w % tiling.col_tiles;
    const int64_t c = (w / tiling.col_tiles) % plan.chunk_bound;
    const int64_t o = w / tiling.col_tiles / plan.chunk_bound;
    if (c >= total_chunks) continue;  // block-uniform
    const int64_t s = chunk_segment[c];
    int64_t lo, hi;
    segment_bounds(offsets, s, plan.rows, lo, hi);
    const ChunkCounts before = s > 0 ? prefix[s - 1] : ChunkCounts{0, 0};
    const int64_t k = c - before.chunks;  // chunk index inside the segment
    const int64_t begin = lo + k * plan.chunk_rows;
    const int64_t end = hi < begin + plan.chunk_rows ? hi : begin + plan.chunk_rows;
    const int64_t column = (tile * tiling.col_threads + ct) * Vec;
    const bool active = column < plan.inner;
    Acc acc[Vec];
    block_fold_rows<In, Acc, Op, Vec>(src + o * plan.rows * plan.inner, plan.inner, column, active, begin, end,
                                      tiling, rt, acc, shared);
    if (rt != 0 || !active) continue;
    if (prefix[s].chunks - before.chunks == 1) {
      store_final<Acc, Out, Vec>(out + (o * plan.segments + s) * plan.inner + column, acc, hi - lo, mean);
    } else {
      const int64_t slot = before.partials + k;
      if (slot >= plan.partial_bound) continue;  // only with invalid (overlapping) offsets: never write past
#pragma unroll
      for (int j = 0; j < Vec; ++j) partials[(o * plan.partial_bound + slot) * plan.inner + column + j] = acc[j];
    }
  }
}

// Folds each long segment's partial rows (in chunk order) and stores its final value. A block looks at
// kThreads segments at once, so skipping the (usually many) single-chunk segments costs one pass.
template <typename Acc, typename Out, typename Op, int Vec>
__global__ void __launch_bounds__(kThreads) combine_kernel(const Acc* __restrict__ partials,
                                                           const int64_t* __restrict__ offsets,
                                                           const ChunkCounts* __restrict__ prefix, Plan plan,
                                                           Tiling tiling, bool mean, Out* __restrict__ out) {
  __shared__ alignas(16) unsigned char shared_raw[kThreads * kMaxVecBytes];
  __shared__ bool needs[kThreads];
  Acc* shared = reinterpret_cast<Acc*>(shared_raw);
  const int ct = threadIdx.x % tiling.col_threads, rt = threadIdx.x / tiling.col_threads;
  const int64_t groups = (plan.segments + kThreads - 1) / kThreads;
  for (int64_t w = blockIdx.x; w < plan.outer * groups; w += gridDim.x) {
    const int64_t o = w / groups, group_first = (w % groups) * kThreads;
    const int64_t mine = group_first + threadIdx.x;
    const bool need = mine < plan.segments && prefix[mine].partials - (mine > 0 ? prefix[mine - 1].partials : 0) > 0;
    needs[threadIdx.x] = need;
    if (!__syncthreads_or(need)) continue;
    for (int i = 0; i < kThreads; ++i) {
      if (!needs[i]) continue;  // block-uniform (shared)
      const int64_t s = group_first + i;
      const int64_t p_begin = s > 0 ? prefix[s - 1].partials : 0;
      int64_t p_end = prefix[s].partials;
      p_end = p_end < plan.partial_bound ? p_end : plan.partial_bound;
      int64_t lo, hi;
      segment_bounds(offsets, s, plan.rows, lo, hi);
      for (int64_t tile = 0; tile < tiling.col_tiles; ++tile) {
        const int64_t column = (tile * tiling.col_threads + ct) * Vec;
        const bool active = column < plan.inner;
        Acc acc[Vec];
        block_fold_rows<Acc, Acc, Op, Vec>(partials + o * plan.partial_bound * plan.inner, plan.inner, column,
                                           active, p_begin, p_end, tiling, rt, acc, shared);
        if (rt == 0 && active) {
          store_final<Acc, Out, Vec>(out + (o * plan.segments + s) * plan.inner + column, acc, hi - lo, mean);
        }
      }
    }
    __syncthreads();  // needs[] is rewritten by the next group
  }
}

}  // namespace segmented
}  // namespace gpuprim
