// The row scans' kernels (launched by scan.cuh). Every float addition happens in an order fixed by the data
// and the constants of tuning_scan.h, never by timing (no atomics on values).
#pragma once
#include <cstdint>

#include "prim/device/scan/lookback.cuh"
#include "prim/device/scan/scan.h"
#include "prim/device/scan/tuning_scan.h"
#include "prim/util/convert.cuh"
#include "prim/util/cub.cuh"
#include "prim/util/launch.h"
#include "prim/warp/scan.cuh"

namespace gpuprim {
namespace scan {

// Logical position i of a row maps to physical position i, or n-1-i when scanning in reverse.
__device__ __forceinline__ int64_t row_pos(int64_t i, int64_t n, bool reverse) { return reverse ? n - 1 - i : i; }

// One warp per row: sequential steps of kWarpSize * kWarpRowItems elements with a carry.
template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(Tuning::kWarpRowThreads)
    warp_row_scan_kernel(const In* __restrict__ in, Out* __restrict__ out, int64_t rows, int64_t n, bool exclusive,
                         bool reverse) {
  constexpr int kWarpRowItems = Tuning::kWarpRowItems;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps_per_grid = int64_t(gridDim.x) * (blockDim.x / kWarpSize);
  for (int64_t row = int64_t(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize; row < rows;
       row += warps_per_grid) {
    const In* row_in = in + row * n;
    Out* row_out = out + row * n;
    Acc carry = Acc(0);
    for (int64_t base = 0; base < n; base += kWarpSize * kWarpRowItems) {
      Acc items[kWarpRowItems];
      Acc thread_total = Acc(0);
#pragma unroll
      for (int j = 0; j < kWarpRowItems; ++j) {
        const int64_t i = base + lane * kWarpRowItems + j;
        items[j] = i < n ? convert<Acc>(row_in[row_pos(i, n, reverse)]) : Acc(0);
        thread_total = thread_total + items[j];
      }
      const Acc lane_incl = warp::inclusive_scan(thread_total);
      Acc running = __shfl_up_sync(kFullMask, lane_incl, 1);
      running = lane == 0 ? carry : carry + running;
#pragma unroll
      for (int j = 0; j < kWarpRowItems; ++j) {
        const int64_t i = base + lane * kWarpRowItems + j;
        const Acc before = running;
        running = running + items[j];
        if (i < n) row_out[row_pos(i, n, reverse)] = convert<Out>(exclusive ? before : running);
      }
      carry = carry + __shfl_sync(kFullMask, lane_incl, kWarpSize - 1);
    }
  }
}

// A tile wholly inside its row is loaded and stored warp-striped: lane l of warp w holds elements
// base + (w * kItems + j) * 32 + l, j < kItems, read through one pointer at constant offsets; each access of a
// warp covers 32 consecutive elements and a warp's accesses 32 * kItems consecutive ones (faster than
// block-striped tiles), and BlockExchange's WarpStripedToBlocked gives thread t the elements
// base + t * kItems + j in warp-local shared memory. The row's last tile goes element by element through
// shared memory instead (a per-item bounds check in the unrolled path cost registers).
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

constexpr int kTileThreads = Tuning::kTileThreads;
constexpr int kTileItems = Tuning::kTileItems;
constexpr int64_t kTileSize = int64_t(kTileThreads) * kTileItems;

// Three passes, 1: each tile's sum.
template <typename In, typename Acc>
__global__ void __launch_bounds__(kTileThreads)
    tile_reduce_kernel(const In* __restrict__ in, Acc* __restrict__ tile_sums, int64_t rows, int64_t n,
                       int64_t tiles_per_row, bool reverse) {
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

// Three passes, 2, in place: tile_sums[row, :] becomes its exclusive prefix (one block per row, chunks with a carry).
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

// Three passes, 3: each tile scanned from its prefix (none for a row of one tile).
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

// ---- single pass with a deterministic look-back (lookback.cuh) ----------------------------------
// Reads the input once and writes the output once. Each tile: scan_tile, whose prefix comes from warp 0
// publishing the tile's aggregate and getting its exclusive prefix (lookback::tile_exclusive_prefix; a
// group's last tile also publishes the group's sums).
template <int kThreads, int kItems>
struct SinglePassTile {
  static constexpr int64_t kSize = int64_t(kThreads) * kItems;
};

// One block per tile, tile t = blockIdx.x (the grid has exactly rows * tiles_per_row blocks): as in CUB's
// single-pass scan, a tile waits only for tiles of lower block index, which the hardware starts first.
// kReverse is a template flag: as a runtime flag it cost 16 registers and a block an SM.
template <int kThreads, int kItems, int kSlots, bool kReverse, typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kThreads) single_pass_scan_kernel(
    const In* __restrict__ in, Out* __restrict__ out, int64_t n, int64_t tiles_per_row, bool exclusive,
    lookback::TileStatus<Acc>* tile_status, lookback::TileStatus<Acc>* group_status) {
  __shared__ TileTemp<Acc, kThreads, kItems> temp;
  __shared__ Acc window[kWarpSize * kSlots];
  __shared__ Acc tile_prefix;
  const int64_t groups_per_row = lookback::groups_for(tiles_per_row);
  const int64_t t = blockIdx.x;
  const int64_t row = t / tiles_per_row, tile = t % tiles_per_row;
  scan_tile<kThreads, kItems>(in + row * n, out + row * n, n, tile * SinglePassTile<kThreads, kItems>::kSize,
                              exclusive, kReverse, temp, [&](Acc aggregate) {
                                if (threadIdx.x < kWarpSize) {  // warp 0, whole
                                  const Acc prefix = lookback::tile_exclusive_prefix<kSlots>(
                                      tile_status + row * tiles_per_row, group_status + row * groups_per_row, tile,
                                      aggregate, window, Tuning::kFirstPollDelayNs);
                                  if (threadIdx.x == 0) tile_prefix = prefix;
                                }
                                __syncthreads();  // tile_prefix visible; the scan's memory free
                                return tile_prefix;
                              });
}

// inner > 1: a thread per column, sequential along n (coalesced over inner).
template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(Tuning::kColumnThreads)
    column_scan_kernel(const In* __restrict__ in, Out* __restrict__ out, Shape shape, bool exclusive, bool reverse) {
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

}  // namespace scan
}  // namespace gpuprim
