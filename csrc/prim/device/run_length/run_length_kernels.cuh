// Kernels of the run-length encoder (launched by run_length.cuh). Element i heads a run when i == 0 or
// x[i] != x[i-1] under the dtype's == (NaN != NaN, -0.0 == +0.0).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "prim/device/run_length/tuning_run_length.h"
#include "prim/util/cub.cuh"
#include "prim/util/launch.h"

namespace gpuprim {
namespace run_length {

constexpr int kThreads = Tuning::kThreads;
constexpr int kItems = Tuning::kItems;
constexpr int64_t kTile = int64_t(kThreads) * kItems;

// Runs counted so far and the position of the last head among them (-1: none yet).
struct RunsPrefix {
  int64_t runs;
  int64_t last_head;
};
struct RunsPrefixOp {
  __host__ __device__ RunsPrefix operator()(const RunsPrefix& a, const RunsPrefix& b) const {
    return {a.runs + b.runs, a.last_head > b.last_head ? a.last_head : b.last_head};
  }
};

template <typename T, typename Word>
__device__ __forceinline__ bool same_value(Word a, Word b) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    T x, y;
    __builtin_memcpy(&x, &a, sizeof(T));
    __builtin_memcpy(&y, &b, sizeof(T));
    if constexpr (std::is_same_v<T, __half>) {
      return __half2float(x) == __half2float(y);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      return __bfloat162float(x) == __bfloat162float(y);
    } else {
      return x == y;
    }
  } else {
    return a == b;  // integers and bool: equal values are equal bits
  }
}

// A thread's kItems consecutive elements from `first` (16-byte loads when aligned and whole), and its heads
// as bits of `heads` (the first element compared with the one before it, x[first - 1]).
template <typename T, typename Word>
__device__ __forceinline__ void load_items(const Word* __restrict__ x, int64_t n, int64_t first, bool vector,
                                           Word (&items)[kItems], uint32_t& heads) {
  if (vector && first + kItems <= n) {
    constexpr int kPerLoad = 16 / sizeof(Word);
#pragma unroll
    for (int v = 0; v < kItems / kPerLoad; ++v) {
      const uint4 raw = *reinterpret_cast<const uint4*>(x + first + v * kPerLoad);
      __builtin_memcpy(items + v * kPerLoad, &raw, 16);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = first + k < n ? x[first + k] : Word(0);
  }
  heads = 0;
  Word previous = first > 0 && first < n ? x[first - 1] : Word(0);
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int64_t i = first + k;
    if (i < n && (i == 0 || !same_value<T>(items[k], previous))) heads |= 1u << k;
    previous = items[k];
  }
}

// The thread's pair: its heads and the position of its last one.
__device__ __forceinline__ RunsPrefix thread_runs(int64_t first, uint32_t heads) {
  return {__popc(heads), heads != 0 ? first + (31 - __clz(heads)) : int64_t(-1)};
}

template <typename T, typename Word>
__global__ void __launch_bounds__(kThreads) count_kernel(const Word* __restrict__ x, int64_t n, bool vector,
                                                         RunsPrefix* __restrict__ tile_runs) {
  using BlockReduce = cub::BlockReduce<RunsPrefix, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int64_t first = int64_t(blockIdx.x) * kTile + int64_t(threadIdx.x) * kItems;
  Word items[kItems];
  uint32_t heads;
  load_items<T>(x, n, first, vector, items, heads);
  const RunsPrefix tile = BlockReduce(temp).Reduce(thread_runs(first, heads), RunsPrefixOp());
  if (threadIdx.x == 0) tile_runs[blockIdx.x] = tile;
}

// Stores are staged so that a warp writes consecutive positions: the tile's heads note their tile-local
// positions in shared memory (in order), then the block writes unique / counts of its runs, which are
// consecutive (from tile_before.runs); each thread storing its own elements' outputs instead (scattered by
// a few positions a lane) was several times slower.
template <typename T, typename Word>
__global__ void __launch_bounds__(kThreads)
    write_kernel(const Word* __restrict__ x, int64_t n, bool vector, const RunsPrefix* __restrict__ tile_before,
                 Word* __restrict__ unique, int64_t* __restrict__ counts, int64_t* __restrict__ num_runs) {
  using BlockScan = cub::BlockScan<int, kThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  __shared__ uint16_t head_at[kTile];  // tile-local positions of the tile's heads, in order
  const int64_t start = int64_t(blockIdx.x) * kTile;
  const int64_t first = start + int64_t(threadIdx.x) * kItems;
  Word items[kItems];
  uint32_t heads;
  load_items<T>(x, n, first, vector, items, heads);
  int offset, tile_heads;
  BlockScan(temp).ExclusiveSum(__popc(heads), offset, tile_heads);
  for (uint32_t rest = heads; rest != 0; rest &= rest - 1) {
    head_at[offset++] = static_cast<uint16_t>(first - start + __ffs(rest) - 1);
  }
  __syncthreads();
  const RunsPrefix before = tile_before[blockIdx.x];
  for (int h = threadIdx.x; h < tile_heads; h += kThreads) {
    const int64_t i = start + head_at[h];
    const int64_t r = before.runs + h;
    unique[r] = x[i];
    if (r > 0) counts[r - 1] = i - (h > 0 ? start + head_at[h - 1] : before.last_head);
  }
  if (start + kTile >= n && threadIdx.x == 0) {  // the last tile: the last run's length, and the count
    const int64_t last_head = tile_heads > 0 ? start + head_at[tile_heads - 1] : before.last_head;
    const int64_t runs = before.runs + tile_heads;
    counts[runs - 1] = n - last_head;
    *num_runs = runs;
  }
}

}  // namespace run_length
}  // namespace gpuprim
