// Tuning of the segmented reductions, as data: one struct per architecture. Only sm_90 has been measured
// (benchmarks/bench_segment_reduce.py, bench_embedding_bag.py, bench_index_add.py; docs/experiments/); every
// architecture uses it until another is measured and added here.
#pragma once
#include <cstdint>

namespace gpuprim {
namespace segmented {

struct SegmentedReduceSm90 {
  // CSR front end (segment_reduce): one block per (chunk, column tile).
  struct Csr {
    static constexpr int kThreads = 256;      // 8 warps: full blocks for long segments, trimmed for short ones
    static constexpr int kUnroll = 4;         // independent row loads in flight per thread
    static constexpr int kMaxVecBytes = 32;   // Vec * sizeof(Acc) at most (fp16: 8 columns of fp32)
    // A chunk has at least this many elements of one column tile (amortizes the per-chunk lookups)...
    static constexpr int64_t kMinChunkElements = int64_t(1) << 16;
    // ...and is long enough that rows / chunk_rows <= this: ~2 waves of 256-thread blocks on 132 SMs, so one
    // giant segment still fills the GPU while its partial rows stay cheap to fold.
    static constexpr int64_t kTargetChunks = 2048;
    // Resident blocks per SM that chunk_kernel is compiled for, by accumulator bytes per thread: the row
    // stream is bound by the loads in flight, and without the bound its registers cost 2-3 blocks an SM.
    static constexpr int min_blocks(int acc_bytes) { return acc_bytes > 16 ? 5 : 8; }
  };
  // Sorted-key front end (index_add, scatter_*, embedding_bag's backward): a group of lanes per run or chunk.
  struct Sorted {
    static constexpr int kThreads = 256;          // blocks of 8 warps, each warp one or several lane groups
    static constexpr int kCombineThreads = 1024;  // one block per hot run: 32 warps share its partial rows
    static constexpr int kUnroll = 4;             // independent row loads in flight per lane
    // Items per chunk: at least kMinChunk, and few enough chunks (<= kMaxChunks, i.e. <= 512 partial rows per
    // combine warp) that a hot run's partial rows fold quickly, while the longest single-chunk run stays short.
    static constexpr int64_t kMinChunk = 32;
    static constexpr int64_t kMaxChunks = 16384;
    static constexpr int kChunkBlocksPerSm = 4;    // grid cap of the chunk passes, in resident blocks
    static constexpr int kCombineBlocksPerSm = 2;  // grid cap of the combine pass, in resident blocks
    // Resident blocks per SM that dense mode's fp32 kernel with 4 columns a lane is compiled for: its rows are
    // gathered loads, bound by how many are in flight; unbounded it took 52-56 registers (4 blocks), here 48.
    static constexpr int kDenseFp32x4BlocksPerSm = 5;
    // Dense mode deals output rows to tiles in strips (a tile of adjacent rows each just below the hot size was
    // one block's serial tail): at least this many rows (a 32-byte sector of 32-bit run indices)...
    static constexpr int kDenseStripRows = 8;
    // ...and at least this many bytes of stored rows (strips of 1-4 KB slowed the writes of a 10M-row gradient).
    static constexpr int64_t kDenseStripBytes = 16384;
  };
};

using SegmentedReduceTuning = SegmentedReduceSm90;

}  // namespace segmented
}  // namespace gpuprim
