// The row scans' launch constants (scan.cuh), as data: a struct per architecture, each constant with the reason
// for its value; `Tuning` is the struct the kernels use. Measurements: docs/experiments/cumsum.md.
#pragma once
#include <cstdint>

#include "prim/util/launch.h"

namespace gpuprim {
namespace scan {

// Measured on sm_90; the default on every architecture until another one has its own struct.
struct TuningSm90 {
  // Rows of at most kWarpRowMax elements, a warp each (warp_row_scan_kernel).
  static constexpr int kWarpRowThreads = kBlockThreads;  // the library's default block: 8 rows a block
  static constexpr int kWarpRowItems = 4;                // 4 loads in flight a lane; a step covers 128 elements
  static constexpr int64_t kWarpRowMax = 2048;           // 16 warp steps; longer rows are worth a block a tile
  // Three passes (tile sums, their scan, the tile scans).
  static constexpr int kTileThreads = kBlockThreads;     // the library's default block
  static constexpr int kTileItems = 16;                  // 4096-element tiles: 16 independent loads in flight
  // The single pass with the deterministic look-back (4-byte accumulators).
  static constexpr int kSinglePassThreads = 256;         // 256 x 32 was the fastest of 128/256 threads x 16-32 items:
  static constexpr int kSinglePassItems = 32;            // 64 registers, 4 blocks an SM
  static constexpr int kLookbackSlots = 1;               // a window of 32 groups of 32 tiles: a round trip's worth
  static constexpr unsigned kFirstPollDelayNs = 1100;    // the scan's best of 800-3000 ns: predecessors done by then
  // inner > 1: a thread per column (column_scan_kernel).
  static constexpr int kColumnThreads = kBlockThreads;   // the library's default block
};

using Tuning = TuningSm90;

}  // namespace scan
}  // namespace gpuprim
