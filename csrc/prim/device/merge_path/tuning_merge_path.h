// Tuning of the merge-path CSR row walk (SpMM), as data. Not yet measured (benchmarks/bench_spmm.py is the
// benchmark to measure it with); sm_90 values are first guesses and every architecture uses them.
#pragma once
#include <cstdint>

#include "prim/util/host_device.h"

namespace gpuprim {
namespace merge_path {

struct MergePathSm90 {
  static constexpr int kThreads = 256;  // 8 warps; a tile is walked by a group of 1..32 lanes
  // Merge items (rows + nonzeros) per tile. The CPU kernel splits rows at the same tile boundaries, so these
  // constants define the summation order: changing them changes results' last bits (on both devices alike).
  static constexpr int64_t kNarrowTileItems = 32;   // F <= 4: a lane per tile; short walks keep many in flight
  static constexpr int64_t kWideTileItems = 128;    // wider rows: a group of lanes per tile, each F-wide step
  static constexpr int64_t kNarrowFeatures = 4;
};

using MergePathTuning = MergePathSm90;

// Merge items per tile for rows of `features` columns: a function of the shape only.
GPUPRIM_HD int64_t tile_items(int64_t features) {
  return features <= MergePathTuning::kNarrowFeatures ? MergePathTuning::kNarrowTileItems
                                                      : MergePathTuning::kWideTileItems;
}

}  // namespace merge_path
}  // namespace gpuprim
