// Launch constants of spmm's CSR row walk, as data. They set speed only: the summation order is row_order.h's.
// Measurements behind them: docs/experiments/spmm.md.
#pragma once
#include <cstdint>

namespace gpuprim {
namespace merge_path {

struct MergePathSm90 {
  static constexpr int kThreads = 256;            // 8 warps a block
  static constexpr int kMinBlocks = 3;            // blocks an SM the walks are built for: <= 80 registers
  static constexpr int kLaneMinBlocks = 3;        // F == 1: 64 registers spill the tile loop
  static constexpr int64_t kLaneLongRow = 4096;   // F == 1: longer rows go to the split pass (16 chunks)
  static constexpr int kColumnUnroll = 4;         // F > 1: nonzeros whose rows of x are gathered at once (8 spills)
  static constexpr int kFoldLoads = 8;            // chunk values a lane loads before folding them in order
  static constexpr int64_t kMinRangeItems = 512;  // rows + nonzeros a range at least: its search is amortized
};

using MergePathTuning = MergePathSm90;

}  // namespace merge_path
}  // namespace gpuprim
