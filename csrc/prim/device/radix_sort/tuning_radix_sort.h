// The radix sorts' launch constants (onesweep, row sorts), as data: a struct per architecture, each constant
// with its reason; `Tuning` is the one the kernels use. Measurements behind them: docs/experiments/sort.md.
#pragma once
#include <cstdint>

#include "prim/util/launch.h"

namespace gpuprim {
namespace radix_sort {

// Measured on sm_90; the default everywhere until another architecture has its own struct.
struct TuningSm90 {
  // Onesweep sort of one row of 32-bit keys (onesweep.cuh).
  static constexpr int kOnesweepThreads = 384;        // CUB's SM90 tile for 4-byte keys and values: 384 x 23
  static constexpr int kOnesweepItems = 23;           // keys a thread of a tile
  static constexpr int kOnesweepMinBlocks = 2;        // __launch_bounds__: 2 tiles an SM
  static constexpr int kOnesweepLookbackBatch = 4;    // look-back statuses read a round trip
  static constexpr int kOnesweepHistogramThreads = kBlockThreads;  // one counter a digit a thread (256 digits)
  static constexpr int kOnesweepHistogramUnroll = 4;  // 16-byte loads in flight a thread
  // Rows sorted by one block each (sort_rows.cu): three tile shapes, the smallest that holds the row.
  static constexpr int kSmallTileThreads = 128, kSmallTileItems = 4;    // rows of up to 512
  static constexpr int kMediumTileThreads = 256, kMediumTileItems = 4;  // rows of up to 1024
  static constexpr int kBlockTileThreads = 256, kBlockTileItems = 8;    // rows of up to 2048
  static constexpr int64_t kShortestBlockRow = 33;    // shorter rows among many: the composite-key sort
  static constexpr int kBlockRowsBlocksPerSm = 32;    // grid-stride beyond this (a row a block)
  // Longer rows.
  static constexpr int64_t kLongRow = int64_t(1) << 18;  // from here a row fills the GPU alone: sorted row by row
  static constexpr int64_t kFewRows = 16;             // when there are at most this many (or 64-bit keys)
  static constexpr int kElementwiseWaves = 4;         // encode / decode / gather grids: 4 waves, then grid-stride
};

using Tuning = TuningSm90;

}  // namespace radix_sort
}  // namespace gpuprim
