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

#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"
#include "prim/util/cub.cuh"
#include "prim/device/scan/lookback.cuh"
#include "prim/util/convert.cuh"

namespace gpuprim {
namespace scan {

constexpr int kWarpRowItems = 4;       // items per lane per step in the warp-per-row kernel
constexpr int64_t kWarpRowMax = 2048;  // rows up to this length use one warp each
constexpr int kTileThreads = 256;
constexpr int kTileItems = 16;         // 4096 elements per tile: 16 independent loads in flight
constexpr int64_t kTileSize = int64_t(kTileThreads) * kTileItems;

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

// A tile wholly inside its row is loaded and stored warp-striped: lane l of warp w holds elements
// base + (w * kItems + j) * 32 + l, j < kItems, read through one pointer at constant offsets; each access of a
// warp covers 32 consecutive elements and a warp's accesses 32 * kItems consecutive ones (H200, 256M, against
// block-striped tiles: bf16 single pass 0.70 -> 0.54 ms, int32 three passes 1.58 -> 1.25 ms), and
// BlockExchange's WarpStripedToBlocked gives thread t the elements base + t * kItems + j in warp-local shared
// memory. The row's last tile goes element by element
// through shared memory instead (a per-item bounds check in the unrolled path took 115 registers, not 80).
template <int kItems, typename In, typename Acc>
__device__ __forceinline__ void load_warp_striped(const In* row_in, int64_t n, int64_t base, bool reverse,
                                                  Acc (&items)[kItems]) {
  const In* at = row_in + row_pos(base + int64_t(threadIdx.x / 32) * 32 * kItems + threadIdx.x % 32, n, reverse);
#pragma unroll
  for (int j = 0; j < kItems; ++j) items[j] = convert<Acc>(reverse ? at[-32 * j] : at[32 * j]);
}

// Shared memory of scan_tile: the exchange (or the last tile's elements) and the block scan take turns.
template <typename Acc, int kThreads, int kItems>
union TileTemp {
  typename cub::BlockExchange<Acc, kThreads, kItems>::TempStorage exchange;
  Acc tile[kThreads * kItems];
  typename cub::BlockScan<Acc, kThreads>::TempStorage scan;
};

// Thread t gets the tile's elements base + t * kItems + j (zero past the row end). Block-uniform; the
// caller syncs before reusing temp.
template <int kThreads, int kItems, typename In, typename Acc>
__device__ __forceinline__ void load_tile_blocked(const In* row_in, int64_t n, int64_t base, bool reverse,
                                                  TileTemp<Acc, kThreads, kItems>& temp, Acc (&items)[kItems]) {
  constexpr int kSize = kThreads * kItems;
  if (base + kSize <= n) {
    load_warp_striped<kItems>(row_in, n, base, reverse, items);
    cub::BlockExchange<Acc, kThreads, kItems>(temp.exchange).WarpStripedToBlocked(items);
    return;
  }
  const int64_t valid = n - base;
#pragma unroll 1
  for (int k = threadIdx.x; k < kSize; k += kThreads) {
    temp.tile[k] = k < valid ? convert<Acc>(row_in[row_pos(base + k, n, reverse)]) : Acc(0);
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kItems; ++j) items[j] = temp.tile[threadIdx.x * kItems + j];
}

// Stores load_tile_blocked's layout. temp must be free on entry.
template <int kThreads, int kItems, typename Acc, typename Out>
__device__ __forceinline__ void store_tile_blocked(Out* row_out, int64_t n, int64_t base, bool reverse,
                                                   TileTemp<Acc, kThreads, kItems>& temp, Acc (&items)[kItems]) {
  constexpr int kSize = kThreads * kItems;
  if (base + kSize <= n) {
    cub::BlockExchange<Acc, kThreads, kItems>(temp.exchange).BlockedToWarpStriped(items);
    Out* at = row_out + row_pos(base + int64_t(threadIdx.x / 32) * 32 * kItems + threadIdx.x % 32, n, reverse);
#pragma unroll
    for (int j = 0; j < kItems; ++j) (reverse ? at[-32 * j] : at[32 * j]) = convert<Out>(items[j]);
    return;
  }
#pragma unroll
  for (int j = 0; j < kItems; ++j) temp.tile[threadIdx.x * kItems + j] = items[j];
  __syncthreads();
  const int64_t valid = n - base;
#pragma unroll 1
  for (int k = threadIdx.x; k < valid && k < kSize; k += kThreads) {
    row_out[row_pos(base + k, n, reverse)] = convert<Out>(temp.tile[k]);
  }
}

// Scans the tile [base, base + kThreads * kItems) of a row into row_out: load, thread totals, block scan
// (which gives the tile's aggregate), prefix = tile_prefix(aggregate) (called by every thread; it must end
// with a barrier, after which the scan's shared memory is free), then the prefix carried through each
// thread's items in order, and the store. The order of every addition is fixed by kThreads and kItems.
template <int kThreads, int kItems, typename In, typename Acc, typename Out, typename TilePrefix>
__device__ __forceinline__ void scan_tile(const In* row_in, Out* row_out, int64_t n, int64_t base, bool exclusive,
                                          bool reverse, TileTemp<Acc, kThreads, kItems>& temp,
                                          TilePrefix&& tile_prefix) {
  Acc items[kItems];
  load_tile_blocked<kThreads, kItems>(row_in, n, base, reverse, temp, items);
  __syncthreads();  // the scan reuses the exchange's memory
  Acc thread_total = Acc(0);
#pragma unroll
  for (int j = 0; j < kItems; ++j) thread_total = thread_total + items[j];
  Acc running, aggregate;
  cub::BlockScan<Acc, kThreads>(temp.scan).ExclusiveScan(thread_total, running, Acc(0), ::cuda::std::plus<Acc>(),
                                                         aggregate);
  const Acc prefix = tile_prefix(aggregate);
  running = threadIdx.x == 0 ? prefix : prefix + running;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const Acc before = running;
    running = running + items[j];
    items[j] = exclusive ? before : running;
  }
  store_tile_blocked<kThreads, kItems>(row_out, n, base, reverse, temp, items);
  __syncthreads();  // temp is reused by the next tile
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
    const int64_t base = tile * kTileSize;
    Acc thread_sum = Acc(0);
    if (base + kTileSize <= n) {
      Acc items[kTileItems];
      load_warp_striped<kTileItems>(in + row * n, n, base, reverse, items);
#pragma unroll
      for (int j = 0; j < kTileItems; ++j) thread_sum = thread_sum + items[j];
    } else {
      for (int64_t i = base + threadIdx.x; i < n; i += kTileThreads) {
        thread_sum = thread_sum + convert<Acc>(in[row * n + row_pos(i, n, reverse)]);
      }
    }
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
  __shared__ TileTemp<Acc, kTileThreads, kTileItems> temp;
  const int64_t total = rows * tiles_per_row;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t row = t / tiles_per_row, tile = t % tiles_per_row;
    scan_tile<kTileThreads, kTileItems>(in + row * n, out + row * n, n, tile * kTileSize, exclusive, reverse, temp,
                                        [&](Acc) {
                                          __syncthreads();
                                          return tile_prefix ? tile_prefix[t] : Acc(0);
                                        });
  }
}

// ---- single pass with a deterministic look-back (prim/lookback.cuh) ------------------------------
// Reads the input once and writes the output once. Each tile: scan_tile, whose prefix comes from warp 0
// publishing the tile's aggregate and getting its exclusive prefix (lookback::tile_exclusive_prefix; a
// group's last tile also publishes the group's sums).
template <int kThreads, int kItems>
struct SinglePassTile {
  static constexpr int64_t kSize = int64_t(kThreads) * kItems;
};
// H200, 256M fp32 (2026-11-30): 256 x 32 items, 64 registers (4 blocks per SM), 0.73 ms (16M: 0.054 ms) with
// tiles claimed from a counter, 0.70-0.71 ms with tile = block index (kept; 128 x 32, 128 x 24, 256 x 24 and
// 128 x 16 that way: 0.77, 0.80, 0.74, 0.88 ms; streaming cache hints on the loads and/or stores: no change;
// persistent blocks copying their next claimed tile into shared memory with cp.async while scanning this one:
// 0.99 ms, as a held tile's aggregate waits for the current tile's look-back). With `reverse` a runtime flag,
// 80 registers (3 blocks) and 0.815 ms; capped at 64 that way it spilled: 0.93 ms. 256 x 20 block-striped
// (before) 0.81 ms. CUB's InclusiveSum, whose float result is not reproducible, 0.68-0.69 ms; three passes
// 0.94 ms. With the look-back's first poll delayed 1100 ns (prim/lookback.cuh; the same tiles and additions):
// 0.656 ms, 16M 0.050 ms, bf16 256M 0.50 -> 0.47 ms.
constexpr int kSinglePassThreads = 256, kSinglePassItems = 32;
constexpr unsigned kFirstPollDelayNs = 1100;
constexpr int kLookbackSlots = 1;  // group look-back window: 32 groups of 32 tiles

// One block per tile, tile t = blockIdx.x (the grid has exactly rows * tiles_per_row blocks): as in CUB's
// single-pass scan, a tile waits only for tiles of lower block index, which the hardware starts first.
// kReverse is a template flag: as a runtime flag it cost 16 registers (see the timings above).
template <int kThreads, int kItems, int kSlots, bool kReverse, typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kThreads) single_pass_scan_kernel(
    const In* __restrict__ in, Out* __restrict__ out, int64_t n, int64_t tiles_per_row, bool exclusive,
    lookback::TileStatus<Acc>* tile_status, lookback::TileStatus<Acc>* group_status) {
  __shared__ TileTemp<Acc, kThreads, kItems> temp;
  __shared__ Acc window[32 * kSlots];
  __shared__ Acc tile_prefix;
  const int64_t groups_per_row = lookback::groups_for(tiles_per_row);
  const int64_t t = blockIdx.x;
  const int64_t row = t / tiles_per_row, tile = t % tiles_per_row;
  scan_tile<kThreads, kItems>(in + row * n, out + row * n, n, tile * SinglePassTile<kThreads, kItems>::kSize,
                              exclusive, kReverse, temp, [&](Acc aggregate) {
                                if (threadIdx.x < 32) {  // warp 0, whole
                                  const Acc prefix = lookback::tile_exclusive_prefix<kSlots>(
                                      tile_status + row * tiles_per_row, group_status + row * groups_per_row, tile,
                                      aggregate, window, kFirstPollDelayNs);
                                  if (threadIdx.x == 0) tile_prefix = prefix;
                                }
                                __syncthreads();  // tile_prefix visible; the scan's memory free
                                return tile_prefix;
                              });
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

template <int kThreads, int kItems>
int64_t single_pass_tiles(int64_t rows, int64_t n) {
  return rows * ((n + SinglePassTile<kThreads, kItems>::kSize - 1) / SinglePassTile<kThreads, kItems>::kSize);
}

template <int kThreads, int kItems, int kSlots, typename In, typename Acc, typename Out>
void single_pass_launch(const In* in, Out* out, int64_t rows, int64_t n, bool exclusive, bool reverse,
                        Workspace& workspace, cudaStream_t stream) {
  const int64_t total_tiles = single_pass_tiles<kThreads, kItems>(rows, n);
  const int64_t tiles_per_row = total_tiles / rows;
  const auto state = lookback::allocate_state<Acc>(rows, tiles_per_row, workspace, stream);
  auto kernel = reverse ? single_pass_scan_kernel<kThreads, kItems, kSlots, true, In, Acc, Out>
                        : single_pass_scan_kernel<kThreads, kItems, kSlots, false, In, Acc, Out>;
  kernel<<<static_cast<unsigned>(total_tiles), kThreads, 0, stream>>>(in, out, n, tiles_per_row, exclusive,
                                                                      state.tiles, state.groups);
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
    // A block per tile: beyond kMaxGrid tiles (2^43 elements) the three passes' grid-stride loops take over.
    if (n > kSize && single_pass_tiles<kSinglePassThreads, kSinglePassItems>(rows, n) <= kMaxGrid &&
        !three_pass_requested()) {
      single_pass_launch<kSinglePassThreads, kSinglePassItems, kLookbackSlots, In, Acc, Out>(
          in, out, rows, n, exclusive, reverse, workspace, stream);
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
