// Deterministic row scans (prefix sums) over a [outer, n, inner] tensor, scanning along n.
//
// Every addition happens in an order fixed by the launch constants below, never by timing:
// no atomics and no decoupled look-back (whose float result depends on which predecessor
// tile happened to be done). So float results are bitwise identical run to run.
//   inner == 1, n <= kWarpRowMax : one warp per row, sequential chunks with a carry.
//   inner == 1, longer rows      : reduce-then-scan over fixed tiles (3 kernels, the default):
//                                  tile sums -> per-row exclusive scan of tile sums -> tile scans.
//                                  Alternative (GPUPRIM_SCAN_ALGO=single_pass, slower until tuned):
//                                  single pass over fixed tiles with a *deterministic* look-back:
//                                  a tile's prefix is (inclusive prefix of the previous group of
//                                  kGroupTiles tiles) + (fixed-order sum of the earlier tile sums
//                                  in its own group). Both terms are fixed functions of the data,
//                                  unlike decoupled look-back, whose float result depends on which
//                                  predecessor happened to be done. Reads the input once.
//   inner > 1                    : one thread per column, sequential along n (coalesced over inner).
#pragma once
#include <cuda/atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/cuda_check.h"
#include "common/workspace.h"
#include "prim/cub.cuh"
#include "prim/types.cuh"

namespace gpuprim {
namespace scan {

constexpr int kWarpRowItems = 4;       // items per lane per step in the warp-per-row kernel
constexpr int64_t kWarpRowMax = 2048;  // rows up to this length use one warp each
constexpr int kTileThreads = 256;
constexpr int kTileItems = 16;         // 4096 elements per tile: 16 independent loads in flight
constexpr int64_t kTileSize = int64_t(kTileThreads) * kTileItems;
constexpr int64_t kMaxGrid = 1 << 30;  // grid-stride loops cover anything larger

struct Shape {
  int64_t outer, n, inner;
};

// Logical position i of a row maps to physical position i, or n-1-i when scanning in reverse.
__device__ __forceinline__ int64_t row_pos(int64_t i, int64_t n, bool reverse) { return reverse ? n - 1 - i : i; }

template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(256) warp_row_scan_kernel(const In* __restrict__ in, Out* __restrict__ out,
                                                            int64_t rows, int64_t n, bool exclusive, bool reverse) {
  const int lane = threadIdx.x % 32;
  const int64_t warps_per_grid = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; row < rows; row += warps_per_grid) {
    const In* row_in = in + row * n;
    Out* row_out = out + row * n;
    Acc carry = Acc(0);
    for (int64_t base = 0; base < n; base += 32 * kWarpRowItems) {
      Acc items[kWarpRowItems];
      Acc thread_total = Acc(0);
#pragma unroll
      for (int j = 0; j < kWarpRowItems; ++j) {
        const int64_t i = base + lane * kWarpRowItems + j;
        items[j] = i < n ? convert<Acc>(row_in[row_pos(i, n, reverse)]) : Acc(0);
        thread_total = thread_total + items[j];
      }
      // Inclusive warp scan of per-lane totals (Hillis-Steele: fixed order).
      Acc lane_incl = thread_total;
#pragma unroll
      for (int offset = 1; offset < 32; offset *= 2) {
        Acc up = __shfl_up_sync(0xffffffffu, lane_incl, offset);
        if (lane >= offset) lane_incl = lane_incl + up;
      }
      Acc running = __shfl_up_sync(0xffffffffu, lane_incl, 1);
      running = lane == 0 ? carry : carry + running;
#pragma unroll
      for (int j = 0; j < kWarpRowItems; ++j) {
        const int64_t i = base + lane * kWarpRowItems + j;
        const Acc before = running;
        running = running + items[j];
        if (i < n) row_out[row_pos(i, n, reverse)] = convert<Out>(exclusive ? before : running);
      }
      carry = carry + __shfl_sync(0xffffffffu, lane_incl, 31);
    }
  }
}

// Loads tile `t` of a row, striped (coalesced), zero-filled past the row end.
template <typename In, typename Acc>
__device__ __forceinline__ void load_tile_striped(const In* row_in, int64_t n, int64_t tile, bool reverse,
                                                  Acc (&items)[kTileItems]) {
  const int64_t base = tile * kTileSize;
#pragma unroll
  for (int j = 0; j < kTileItems; ++j) {
    const int64_t i = base + j * kTileThreads + threadIdx.x;
    items[j] = i < n ? convert<Acc>(row_in[row_pos(i, n, reverse)]) : Acc(0);
  }
}

template <typename In, typename Acc>
__global__ void __launch_bounds__(kTileThreads) tile_reduce_kernel(const In* __restrict__ in, Acc* __restrict__ tile_sums,
                                                                    int64_t rows, int64_t n, int64_t tiles_per_row,
                                                                    bool reverse) {
  using BlockReduce = cub::BlockReduce<Acc, kTileThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int64_t total = rows * tiles_per_row;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t row = t / tiles_per_row, tile = t % tiles_per_row;
    Acc items[kTileItems];
    load_tile_striped(in + row * n, n, tile, reverse, items);
    Acc thread_sum = Acc(0);
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) thread_sum = thread_sum + items[j];
    const Acc tile_sum = BlockReduce(temp).Sum(thread_sum);
    if (threadIdx.x == 0) tile_sums[t] = tile_sum;
    __syncthreads();  // temp is reused by the next tile
  }
}

// In place: tile_sums[row, :] becomes its exclusive prefix (one block per row, chunks with a carry).
template <typename Acc>
__global__ void __launch_bounds__(kTileThreads) tile_prefix_kernel(Acc* __restrict__ tile_sums, int64_t rows,
                                                                    int64_t tiles_per_row) {
  using BlockScan = cub::BlockScan<Acc, kTileThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    Acc* sums = tile_sums + row * tiles_per_row;
    Acc carry = Acc(0);
    for (int64_t base = 0; base < tiles_per_row; base += kTileThreads) {
      const int64_t i = base + threadIdx.x;
      const Acc value = i < tiles_per_row ? sums[i] : Acc(0);
      Acc prefix, chunk_total;
      BlockScan(temp).ExclusiveScan(value, prefix, Acc(0), ::cuda::std::plus<Acc>(), chunk_total);
      if (i < tiles_per_row) sums[i] = carry + prefix;
      carry = carry + chunk_total;
      __syncthreads();
    }
  }
}

template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kTileThreads) tile_scan_kernel(const In* __restrict__ in, Out* __restrict__ out,
                                                                  const Acc* __restrict__ tile_prefix, int64_t rows,
                                                                  int64_t n, int64_t tiles_per_row, bool exclusive,
                                                                  bool reverse) {
  using Exchange = cub::BlockExchange<Acc, kTileThreads, kTileItems>;
  using BlockScan = cub::BlockScan<Acc, kTileThreads>;
  __shared__ union {
    typename Exchange::TempStorage exchange;
    typename BlockScan::TempStorage scan;
  } temp;
  const int64_t total = rows * tiles_per_row;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t row = t / tiles_per_row, tile = t % tiles_per_row;
    Acc items[kTileItems];
    load_tile_striped(in + row * n, n, tile, reverse, items);
    Exchange(temp.exchange).StripedToBlocked(items);
    __syncthreads();
    Acc thread_total = Acc(0);
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) thread_total = thread_total + items[j];
    Acc running;
    BlockScan(temp.scan).ExclusiveScan(thread_total, running, Acc(0), ::cuda::std::plus<Acc>());
    const Acc prefix = tile_prefix ? tile_prefix[t] : Acc(0);
    running = threadIdx.x == 0 ? prefix : prefix + running;
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) {
      const Acc before = running;
      running = running + items[j];
      items[j] = exclusive ? before : running;
    }
    __syncthreads();
    Exchange(temp.exchange).BlockedToStriped(items);
    const int64_t base = tile * kTileSize;
    Out* row_out = out + row * n;
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) {
      const int64_t i = base + j * kTileThreads + threadIdx.x;
      if (i < n) row_out[row_pos(i, n, reverse)] = convert<Out>(items[j]);
    }
    __syncthreads();
  }
}

// ---- single pass with deterministic look-back ---------------------------------------------------
// Tiles per look-back group. The chain of group prefixes is serial (one flag round trip per group,
// a few microseconds), so a group must stream for longer than that: 256 tiles (4 MB of fp32) made
// the chain the bottleneck on the H200 (1.39 ms for 256M fp32); 1024 tiles give 16 MB per hop.
constexpr int kGroupPerThread = 4;
constexpr int kGroupTiles = kTileThreads * kGroupPerThread;

// A value published once by one block and read by others. 32-bit values share one 64-bit word
// with their ready flag: a single relaxed store publishes both and a single relaxed load reads
// both, so a tile's look-back issues all its polls back to back (one L2 round trip, not two per
// slot with a flag then a value). Wider values keep a separate flag (release / acquire).
template <typename Acc, bool kPacked = sizeof(Acc) == 4>
struct Published;

template <typename Acc>
struct Published<Acc, true> {
  unsigned long long word;  // bit 32: ready (the launcher zeroes it); low 32 bits: the value

  __device__ __forceinline__ void publish(Acc value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof(bits));
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(word).store(
        (1ull << 32) | bits, cuda::memory_order_relaxed);
  }
  __device__ __forceinline__ bool try_read(Acc& value) {
    const unsigned long long w =
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(word).load(cuda::memory_order_relaxed);
    const auto bits = static_cast<uint32_t>(w);
    memcpy(&value, &bits, sizeof(bits));
    return (w >> 32) != 0;
  }
};

template <typename Acc>
struct Published<Acc, false> {
  Acc value;
  int ready;  // 0 until value is visible (the launcher zeroes it)

  __device__ __forceinline__ void publish(Acc v) {
    value = v;
    cuda::atomic_ref<int, cuda::thread_scope_device>(ready).store(1, cuda::memory_order_release);
  }
  __device__ __forceinline__ bool try_read(Acc& v) {
    if (cuda::atomic_ref<int, cuda::thread_scope_device>(ready).load(cuda::memory_order_acquire) == 0) return false;
    v = *reinterpret_cast<volatile Acc*>(&value);
    return true;
  }
};

template <typename Acc>
__device__ __forceinline__ Acc wait_for(Published<Acc>* slot) {
  Acc value;
  while (!slot->try_read(value)) {
  }
  return value;
}

// Tiles are claimed in increasing order from a counter, so every tile a block waits for was
// claimed earlier by a running block: no deadlock whatever the block scheduling order.
template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kTileThreads) single_pass_scan_kernel(
    const In* __restrict__ in, Out* __restrict__ out, int64_t rows, int64_t n, int64_t tiles_per_row,
    bool exclusive, bool reverse, Published<Acc>* tile_sums, Published<Acc>* group_prefix,
    unsigned long long* tile_counter) {
  using Exchange = cub::BlockExchange<Acc, kTileThreads, kTileItems>;
  using BlockScan = cub::BlockScan<Acc, kTileThreads>;
  using BlockReduce = cub::BlockReduce<Acc, kTileThreads>;
  __shared__ union {
    typename Exchange::TempStorage exchange;
    typename BlockScan::TempStorage scan;
    typename BlockReduce::TempStorage reduce;
  } temp;
  __shared__ int64_t claimed;
  __shared__ Acc tile_prefix;
  const int64_t total = rows * tiles_per_row;
  const int64_t groups_per_row = (tiles_per_row + kGroupTiles - 1) / kGroupTiles;
  for (;;) {
    if (threadIdx.x == 0) claimed = static_cast<int64_t>(atomicAdd(tile_counter, 1ull));
    __syncthreads();
    const int64_t t = claimed;
    if (t >= total) return;
    const int64_t row = t / tiles_per_row, tile = t % tiles_per_row;
    const int64_t group = tile / kGroupTiles, group_first = group * kGroupTiles;
    const int64_t row_first_tile = row * tiles_per_row;

    Acc items[kTileItems];
    load_tile_striped(in + row * n, n, tile, reverse, items);
    Acc thread_total = Acc(0);
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) thread_total = thread_total + items[j];
    // Publish this tile's sum first: later tiles are waiting for it.
    const Acc tile_sum = BlockReduce(temp.reduce).Sum(thread_total);
    if (threadIdx.x == 0) tile_sums[t].publish(tile_sum);
    __syncthreads();

    // Fixed-order sum of the earlier tiles of this group: thread k adds tiles
    // group_first + k*kGroupPerThread + (0..kGroupPerThread-1) in order, then a block reduction.
    const bool is_group_last = tile == group_first + kGroupTiles - 1 || tile == tiles_per_row - 1;
    // All of a thread's slots are polled together until every one is ready, then added in order.
    Acc values[kGroupPerThread];
    bool pending[kGroupPerThread];
    const int64_t first_peer = group_first + int64_t(threadIdx.x) * kGroupPerThread;
#pragma unroll
    for (int j = 0; j < kGroupPerThread; ++j) {
      const int64_t peer = first_peer + j;
      pending[j] = peer < tile || (is_group_last && peer <= tile);
      values[j] = Acc(0);
    }
    for (bool waiting = true; waiting;) {
      waiting = false;
#pragma unroll
      for (int j = 0; j < kGroupPerThread; ++j) {
        if (pending[j]) {
          pending[j] = !tile_sums[row_first_tile + first_peer + j].try_read(values[j]);
          waiting = waiting || pending[j];
        }
      }
    }
    Acc before_part = Acc(0), group_part = Acc(0);
#pragma unroll
    for (int j = 0; j < kGroupPerThread; ++j) {
      const int64_t peer = first_peer + j;
      if (peer < tile) before_part = before_part + values[j];
      if (peer < tile || (is_group_last && peer <= tile)) group_part = group_part + values[j];
    }
    const Acc before_in_group = BlockReduce(temp.reduce).Sum(before_part);
    __syncthreads();
    Acc group_sum = Acc(0);
    if (is_group_last) {
      group_sum = BlockReduce(temp.reduce).Sum(group_part);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      Published<Acc>* groups = group_prefix + row * groups_per_row;
      const Acc previous = group > 0 ? wait_for(&groups[group - 1]) : Acc(0);
      if (is_group_last) groups[group].publish(group > 0 ? previous + group_sum : group_sum);
      tile_prefix = group > 0 ? previous + before_in_group : before_in_group;
    }

    Exchange(temp.exchange).StripedToBlocked(items);
    __syncthreads();
    thread_total = Acc(0);
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) thread_total = thread_total + items[j];
    Acc running;
    BlockScan(temp.scan).ExclusiveScan(thread_total, running, Acc(0), ::cuda::std::plus<Acc>());
    __syncthreads();  // also makes tile_prefix visible
    running = threadIdx.x == 0 ? tile_prefix : tile_prefix + running;
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) {
      const Acc before = running;
      running = running + items[j];
      items[j] = exclusive ? before : running;
    }
    Exchange(temp.exchange).BlockedToStriped(items);
    const int64_t base = tile * kTileSize;
    Out* row_out = out + row * n;
#pragma unroll
    for (int j = 0; j < kTileItems; ++j) {
      const int64_t i = base + j * kTileThreads + threadIdx.x;
      if (i < n) row_out[row_pos(i, n, reverse)] = convert<Out>(items[j]);
    }
    __syncthreads();  // temp and `claimed` are reused by the next tile
  }
}

template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(256) column_scan_kernel(const In* __restrict__ in, Out* __restrict__ out, Shape shape,
                                                          bool exclusive, bool reverse) {
  const int64_t columns = shape.outer * shape.inner;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < columns; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = c / shape.inner, col = c % shape.inner;
    const int64_t base = o * shape.n * shape.inner + col;
    Acc running = Acc(0);
    for (int64_t i = 0; i < shape.n; ++i) {
      const int64_t at = base + row_pos(i, shape.n, reverse) * shape.inner;
      const Acc before = running;
      running = running + convert<Acc>(in[at]);
      out[at] = convert<Out>(exclusive ? before : running);
    }
  }
}

// Long rows use reduce-then-scan by default: on the H200 (2026-11-29, fp32 256M) it took 1.03 ms
// against 1.39 ms for the single pass, whose look-back is not tuned yet. GPUPRIM_SCAN_ALGO=single_pass
// selects the single pass (benchmarks/bench_cumsum.py times both); read per call, ~100 ns.
inline bool three_pass_requested() {
  const char* algo = std::getenv("GPUPRIM_SCAN_ALGO");
  return algo == nullptr || std::strcmp(algo, "single_pass") != 0;
}

inline unsigned grid_for(int64_t work_items, int64_t per_block) {
  const int64_t blocks = (work_items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxGrid ? kMaxGrid : blocks));
}

// Scans `in` into `out` (same [outer, n, inner] contiguous layout) on `stream`.
template <typename In, typename Acc, typename Out>
void scan_launch(const In* in, Out* out, Shape shape, bool exclusive, bool reverse, Workspace& workspace,
                 cudaStream_t stream) {
  if (shape.outer == 0 || shape.n == 0 || shape.inner == 0) return;
  if (shape.inner > 1) {
    column_scan_kernel<In, Acc, Out><<<grid_for(shape.outer * shape.inner, 256), 256, 0, stream>>>(
        in, out, shape, exclusive, reverse);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const int64_t rows = shape.outer, n = shape.n;
  if (n <= kWarpRowMax) {
    warp_row_scan_kernel<In, Acc, Out><<<grid_for(rows, 8), 256, 0, stream>>>(in, out, rows, n, exclusive, reverse);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const int64_t tiles_per_row = (n + kTileSize - 1) / kTileSize;
  const int64_t total_tiles = rows * tiles_per_row;
  if (tiles_per_row > 1 && !three_pass_requested()) {
    const int64_t groups = rows * ((tiles_per_row + kGroupTiles - 1) / kGroupTiles);
    const size_t state_bytes = sizeof(Published<Acc>) * size_t(total_tiles + groups) + sizeof(unsigned long long);
    auto* state = static_cast<unsigned char*>(workspace.allocate(state_bytes));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(state, 0, state_bytes, stream));
    auto* tile_sums = reinterpret_cast<Published<Acc>*>(state);
    auto* group_prefix = tile_sums + total_tiles;
    auto* counter = reinterpret_cast<unsigned long long*>(group_prefix + groups);
    single_pass_scan_kernel<In, Acc, Out><<<grid_for(total_tiles, 1), kTileThreads, 0, stream>>>(
        in, out, rows, n, tiles_per_row, exclusive, reverse, tile_sums, group_prefix, counter);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  Acc* tile_prefix = nullptr;
  if (tiles_per_row > 1) {
    tile_prefix = static_cast<Acc*>(workspace.allocate(sizeof(Acc) * total_tiles));
    tile_reduce_kernel<In, Acc><<<grid_for(total_tiles, 1), kTileThreads, 0, stream>>>(in, tile_prefix, rows, n,
                                                                                       tiles_per_row, reverse);
    GPUPRIM_LAUNCH_CHECK();
    tile_prefix_kernel<Acc><<<grid_for(rows, 1), kTileThreads, 0, stream>>>(tile_prefix, rows, tiles_per_row);
    GPUPRIM_LAUNCH_CHECK();
  }
  tile_scan_kernel<In, Acc, Out><<<grid_for(total_tiles, 1), kTileThreads, 0, stream>>>(
      in, out, tile_prefix, rows, n, tiles_per_row, exclusive, reverse);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace scan
}  // namespace gpuprim
