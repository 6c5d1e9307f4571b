// The row top-k kernels' launch constants (short rows, radix select, multi-block, filter), as data: a struct
// per architecture, each constant with its reason; `Tuning` is the one the kernels use. Measurements behind
// them: docs/experiments/topk.md.
#pragma once
#include <cstdint>

#include "prim/util/launch.h"

namespace gpuprim {
namespace topk_rows {

// Measured on sm_90; the default everywhere until another architecture has its own struct.
struct TuningSm90 {
  // Short rows, G lanes a row (short_rows.cuh).
  static constexpr int kShortItems = 16;                 // items a lane: rows of up to 512 in one warp's registers
  static constexpr int kShortThreads = kBlockThreads;    // the library's default block
  static constexpr int kShortMinBlocks = 4;              // blocks an SM the kernels are built for: <= 64 registers
  static constexpr int kShortBlocksPerSm = 16;           // grid-stride beyond this: rows are a warp's few rounds each
  static constexpr int64_t kShortMaxK = 64;              // k rounds of a group argmax; larger k takes the filter
  // Short rows of 8-byte keys, a warp a row (warp_rows.cuh).
  static constexpr int kWarpRowsPerBlock = 8;            // 256 threads: 8 rows at a time
  static constexpr int kWarpRowsBlocksPerSm = 32;        // grid-stride beyond this
  // One block a row: radix select, gather, block sort (radix_select.cuh).
  static constexpr int kSelectThreads = 512;             // a row's digit passes: many loads in flight a block
  static constexpr int kSelectLoadItems = 4;             // loads a thread before using them (more in flight)
  static constexpr int kSelectBlocksPerSm = 8;           // grid-stride beyond this (a row a block)
  static constexpr int kCandidateBytes = 32 * 1024;      // a digit's bin that fits here is selected in shared memory
  static constexpr int64_t kBlockSortMax = 4 * kSelectThreads;  // k sorted by a block radix sort (4 items a thread)
  // Few long rows, several blocks a row (multi_block.cuh).
  static constexpr int kMultiMaxRowsPerSm = 2;           // rows <= SMs / 2: one block a row leaves SMs idle
  static constexpr int64_t kMultiMinRow = int64_t(1) << 14;  // shorter rows: the extra launches cost more
  static constexpr int kMultiBlocksPerSm = 4;            // blocks an SM in all: one wave
  static constexpr int64_t kMultiMinSlice = 4 * kSelectThreads;  // a block's slice: at least a few tiles
  // Threshold filter (filter*.cuh).
  static constexpr int kFilterThreads = kBlockThreads;   // 8 warps: a tile of 2048 in one round of 16-byte loads
  static constexpr int kFilterMinBlocks = 4;             // __launch_bounds__: 64 registers, 4 blocks an SM
  static constexpr int kFilterTileElements = 2048;       // elements a block filters between two looks at its buffer
  static constexpr int kFilterBufferCapacity = 4096;     // candidates in shared memory (32 KB; a power of two)
  static constexpr int64_t kFilterMaxK = 1024;           // the buffer holds k and a tile after a compaction
  static constexpr int64_t kFilterMergeMax = 8192;       // candidates a row's last block merges itself
  static constexpr int64_t kFilterHistogramMinK = 256;   // one block a row: from this k its own histogram pays
  static constexpr int kFilterHistogramBits = 11;        // that histogram's bins (8 KB of shared memory)
  static constexpr int kFilterRowHistogramBits = 12;     // the few-rows pre-pass's bins (global counts a row)
  static constexpr int64_t kFilterSampleMaxStride = 8;   // the pre-pass reads >= 1 / 8 of a row, not all of it
  static constexpr int64_t kFilterSampleKeys = 1024;     // stride x k: about the keys its bound then admits
  static constexpr int64_t kFilterSampleMinStride = 2;   // at most half a row: a whole read cost more
  static constexpr int kFilterRankStage = 2048;          // rank_merge_kernel's candidates staged at a time (16 KB)
  static constexpr int kFilterLevelBlocksPerResident = 8;  // a level's grid: grid-stride beyond 8 waves
  static constexpr int kFilterRankBlocksPerResident = 2;   // rank_merge_kernel's grid: 2 waves
  static constexpr int kFilterCountInFlight = 4;         // count_bins: loads a thread before counting (latency)
  static constexpr int kFilterMergeLoads = 4;            // merge_candidates: loads a thread a step
};

using Tuning = TuningSm90;

}  // namespace topk_rows
}  // namespace gpuprim
