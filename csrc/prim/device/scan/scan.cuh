// Deterministic row scans (prefix sums) over a [outer, n, inner] tensor, scanning along n.
//
// Every float addition happens in an order that is a fixed function of the data and the constants of
// tuning_scan.h, never of timing (no atomics on values), so float results are bitwise identical run to run.
//   inner == 1, n <= kWarpRowMax : one warp per row, sequential chunks with a carry.
//   inner == 1, longer rows      : 4-byte accumulators: one pass over tiles with the deterministic decoupled
//                                  look-back of lookback.cuh (a fixed-order scan of the tile sums inside
//                                  groups of 32 tiles, plus the left fold of the earlier groups' sums); reads
//                                  the input once.
//                                  8-byte accumulators (their value does not fit beside the status in one
//                                  64-bit word), or Algorithm::kThreePass: reduce-then-scan, tile sums ->
//                                  per-row exclusive scan of tile sums -> tile scans (3 kernels, reads the
//                                  input twice).
//   inner > 1                    : one thread per column, sequential along n (coalesced over inner).
#pragma once
#include <cstdint>

#include "prim/device/scan/scan.h"
#include "prim/device/scan/scan_kernels.cuh"
#include "prim/device/scan/tuning_scan.h"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace scan {

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

template <typename In, typename Acc, typename Out>
void three_pass_launch(const In* in, Out* out, int64_t rows, int64_t n, bool exclusive, bool reverse,
                       Workspace& workspace, cudaStream_t stream) {
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

// Scans `in` into `out` (same [outer, n, inner] contiguous layout) on `stream`; `algorithm` picks the long
// rows' algorithm (see above).
template <typename In, typename Acc, typename Out>
void scan_launch(const In* in, Out* out, Shape shape, bool exclusive, bool reverse, Workspace& workspace,
                 cudaStream_t stream, Algorithm algorithm = Algorithm::kAuto) {
  if (shape.outer == 0 || shape.n == 0 || shape.inner == 0) return;
  if (shape.inner > 1) {
    constexpr int kThreads = Tuning::kColumnThreads;
    column_scan_kernel<In, Acc, Out><<<grid_for(shape.outer * shape.inner, kThreads), kThreads, 0, stream>>>(
        in, out, shape, exclusive, reverse);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const int64_t rows = shape.outer, n = shape.n;
  if (n <= Tuning::kWarpRowMax) {
    constexpr int kThreads = Tuning::kWarpRowThreads;
    warp_row_scan_kernel<In, Acc, Out><<<grid_for(rows, kThreads / kWarpSize), kThreads, 0, stream>>>(
        in, out, rows, n, exclusive, reverse);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  if constexpr (sizeof(Acc) == 4) {
    constexpr int kThreads = Tuning::kSinglePassThreads, kItems = Tuning::kSinglePassItems;
    // A block per tile: beyond kMaxGrid tiles (2^43 elements) the three passes' grid-stride loops take over.
    if (algorithm == Algorithm::kAuto && n > SinglePassTile<kThreads, kItems>::kSize &&
        single_pass_tiles<kThreads, kItems>(rows, n) <= kMaxGrid) {
      single_pass_launch<kThreads, kItems, Tuning::kLookbackSlots, In, Acc, Out>(in, out, rows, n, exclusive, reverse,
                                                                                 workspace, stream);
      return;
    }
  }
  three_pass_launch<In, Acc, Out>(in, out, rows, n, exclusive, reverse, workspace, stream);
}

}  // namespace scan
}  // namespace gpuprim
