// Deterministic row scans (prefix sums) over a [outer, n, inner] tensor, scanning along n.
//
// Every float addition happens in an order that is a fixed function of the data and the launch
// constants below, never of timing (no atomics on values), so float results are bitwise identical
// run to run.
//   inner == 1, n <= kWarpRowMax : one warp per row, sequential chunks with a carry.
//   inner == 1, longer rows      : 4-byte accumulators: one pass over tiles with the deterministic
//                                  decoupled look-back of prim/lookback.cuh (a fixed-order scan of
//                                  the tile sums inside groups of 32 tiles, plus the left fold of the
//                                  earlier groups' sums); reads the input once.
//                                  8-byte accumulators, or GPUPRIM_SCAN_ALGO=three_pass:
//                                  reduce-then-scan, tile sums -> per-row exclusive scan of tile
//                                  sums -> tile scans (3 kernels, reads the input twice).
//   inner > 1                    : one thread per column, sequential along n (coalesced over inner).
#pragma once
#include <cuda/atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/cuda_check.h"
#include "common/workspace.h"
#include "prim/cub.cuh"
#include "prim/lookback.cuh"
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

// ---- single pass with a deterministic look-back (prim/lookback.cuh) ------------------------------
// Reads the input once and writes the output once. Each tile: load, block scan of the thread totals
// (which also gives the tile's aggregate), then warp 0 publishes the aggregate and gets the exclusive
// prefix (lookback::tile_exclusive_prefix; a group's last tile also publishes the group's sums), then
// every thread adds the prefix and stores.
template <int kThreads, int kItems>
struct SinglePassTile {
  static constexpr int64_t kSize = int64_t(kThreads) * kItems;
};
// H200, 256M fp32 (2026-11-29): 256 x 20 items 0.81 ms (CUB's InclusiveSum, whose float result is not
// reproducible, 0.68 ms; three passes 1.03 ms); 256 x 16 0.90, 256 x 24 0.83 ms. Tiles in block-index order
// instead of claimed from a counter gave 0.78 ms, but that relies on blocks starting in index order.
constexpr int kSinglePassThreads = 256, kSinglePassItems = 20;
constexpr int kLookbackSlots = 1;  // group look-back window: 32 groups of 32 tiles

template <int kThreads, int kItems, int kSlots, typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kThreads) single_pass_scan_kernel(
    const In* __restrict__ in, Out* __restrict__ out, int64_t rows, int64_t n, int64_t tiles_per_row,
    bool exclusive, bool reverse, lookback::TileStatus<Acc>* tile_status, lookback::TileStatus<Acc>* group_status,
    unsigned long long* tile_counter) {
  using Exchange = cub::BlockExchange<Acc, kThreads, kItems>;
  using BlockScan = cub::BlockScan<Acc, kThreads>;
  constexpr int64_t kSize = SinglePassTile<kThreads, kItems>::kSize;
  __shared__ union {
    typename Exchange::TempStorage exchange;
    typename BlockScan::TempStorage scan;
  } temp;
  __shared__ Acc window[32 * kSlots];
  __shared__ int64_t claimed;
  __shared__ Acc tile_prefix;
  const int64_t total = rows * tiles_per_row;
  for (;;) {
    // Claimed when the block is ready to load it: a tile claimed ahead (while the block still works on
    // another) holds up the later tiles of its group, which wait for its aggregate (H200: 256M fp32,
    // 256 x 16 items, 0.92 -> 1.29 ms when the claim was made one tile ahead).
    if (threadIdx.x == 0) claimed = static_cast<int64_t>(atomicAdd(tile_counter, 1ull));
    __syncthreads();
    const int64_t t = claimed;
    if (t >= total) return;
    const int64_t row = t / tiles_per_row, tile = t % tiles_per_row;
    const In* row_in = in + row * n;
    const int64_t base = tile * kSize;

    Acc items[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {  // striped: coalesced
      const int64_t i = base + j * kThreads + threadIdx.x;
      items[j] = i < n ? convert<Acc>(row_in[row_pos(i, n, reverse)]) : Acc(0);
    }
    Exchange(temp.exchange).StripedToBlocked(items);
    __syncthreads();
    Acc thread_total = Acc(0);
#pragma unroll
    for (int j = 0; j < kItems; ++j) thread_total = thread_total + items[j];
    Acc running, aggregate;
    BlockScan(temp.scan).ExclusiveScan(thread_total, running, Acc(0), ::cuda::std::plus<Acc>(), aggregate);

    if (threadIdx.x < 32) {  // warp 0, whole
      const int64_t groups_per_row = (tiles_per_row + lookback::kGroupTiles - 1) / lookback::kGroupTiles;
      const Acc prefix = lookback::tile_exclusive_prefix<kSlots>(tile_status + row * tiles_per_row,
                                                                 group_status + row * groups_per_row, tile, aggregate,
                                                                 window);
      if (threadIdx.x == 0) tile_prefix = prefix;
    }
    __syncthreads();  // tile_prefix visible; temp.scan free for the exchange
    const Acc prefix = tile_prefix;
    running = threadIdx.x == 0 ? prefix : prefix + running;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const Acc before = running;
      running = running + items[j];
      items[j] = exclusive ? before : running;
    }
    Exchange(temp.exchange).BlockedToStriped(items);
    Out* row_out = out + row * n;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + j * kThreads + threadIdx.x;
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

// Long rows with a 4-byte accumulator (fp32, fp16, bf16 inputs) use the single pass by default;
// GPUPRIM_SCAN_ALGO=three_pass selects reduce-then-scan (benchmarks/bench_cumsum.py times both).
// 8-byte accumulators (integer and fp64 inputs) always use three passes: their value does not fit
// beside the status in one 64-bit word. Read per call, ~100 ns.
inline bool three_pass_requested() {
  const char* algo = std::getenv("GPUPRIM_SCAN_ALGO");
  return algo != nullptr && std::strcmp(algo, "three_pass") == 0;
}

inline unsigned grid_for(int64_t work_items, int64_t per_block) {
  const int64_t blocks = (work_items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxGrid ? kMaxGrid : blocks));
}

template <int kThreads, int kItems, int kSlots, typename In, typename Acc, typename Out>
void single_pass_launch(const In* in, Out* out, int64_t rows, int64_t n, bool exclusive, bool reverse,
                        Workspace& workspace, cudaStream_t stream) {
  const int64_t tiles_per_row = (n + SinglePassTile<kThreads, kItems>::kSize - 1) / SinglePassTile<kThreads, kItems>::kSize;
  const int64_t total_tiles = rows * tiles_per_row;
  const int64_t total_groups = rows * ((tiles_per_row + lookback::kGroupTiles - 1) / lookback::kGroupTiles);
  const size_t state_bytes =
      sizeof(lookback::TileStatus<Acc>) * size_t(total_tiles + total_groups) + sizeof(unsigned long long);
  auto* state = static_cast<unsigned char*>(workspace.allocate(state_bytes));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(state, 0, state_bytes, stream));
  auto* tile_status = reinterpret_cast<lookback::TileStatus<Acc>*>(state);
  auto* group_status = tile_status + total_tiles;
  auto* counter = reinterpret_cast<unsigned long long*>(group_status + total_groups);
  single_pass_scan_kernel<kThreads, kItems, kSlots, In, Acc, Out><<<grid_for(total_tiles, 1), kThreads, 0, stream>>>(
      in, out, rows, n, tiles_per_row, exclusive, reverse, tile_status, group_status, counter);
  GPUPRIM_LAUNCH_CHECK();
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
  if constexpr (sizeof(Acc) == 4) {
    constexpr int64_t kSize = SinglePassTile<kSinglePassThreads, kSinglePassItems>::kSize;
    if (n > kSize && !three_pass_requested()) {
      single_pass_launch<kSinglePassThreads, kSinglePassItems, kLookbackSlots, In, Acc, Out>(in, out, rows, n, exclusive, reverse,
                                                                              workspace, stream);
      return;
    }
  }
  const int64_t tiles_per_row = (n + kTileSize - 1) / kTileSize;
  const int64_t total_tiles = rows * tiles_per_row;
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
