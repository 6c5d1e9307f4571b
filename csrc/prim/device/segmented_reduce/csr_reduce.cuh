// The CSR front end of the segmented reduction: the rows of a [outer, rows, inner] tensor reduced over the
// segments offsets[s]:offsets[s+1] into [outer, segments, inner] (empty segments give 0, mean divides).
//
// Chunks (plan.cuh) are at most `chunk_rows` rows of one segment (an empty segment is one empty chunk):
//   count_chunks_kernel  the plan of every segment                        -> CUB inclusive scan (integers)
//   chunk_map_kernel     the segment of every chunk (binary search in the scanned plan)
//   chunk_kernel         one block per (chunk, column tile): a segment of one chunk is finished and stored; a
//                        longer one stores its chunk's partial row in workspace
//   combine_kernel       folds the partial rows of each hot segment in chunk order and stores it
// Inside a block, thread (rt, ct) folds rows rt, rt + row_threads, ... of its Vec columns in row order
// (prim/block/row_fold.cuh), then the row_threads values meet in a fixed tree. Bitwise reproducible, no float
// atomics, no host sync.
#pragma once
#include <algorithm>
#include <cstdint>

#include "prim/block/row_fold.cuh"
#include "prim/device/segmented_reduce/plan.cuh"
#include "prim/device/segmented_reduce/reducers.h"
#include "prim/device/segmented_reduce/segment_offsets.h"
#include "prim/device/segmented_reduce/tuning_segmented_reduce.h"
#include "prim/util/cub.cuh"
#include "prim/util/input_error.cuh"
#include "prim/util/launch.h"

namespace gpuprim {
namespace segmented {

using CsrTuning = SegmentedReduceTuning::Csr;
constexpr int kCsrThreads = CsrTuning::kThreads;

// Thread layout of one block over a column tile: col_threads threads side by side, each `vec` columns wide,
// row_threads such rows of threads. chunk_kernel runs with col_threads * row_threads threads (maybe fewer than
// kCsrThreads, for short segments); combine_kernel always with kCsrThreads.
struct Tiling {
  int vec;            // columns per thread load (a power of two dividing inner; 16 bytes at most)
  int col_threads;    // power of two; col_threads * row_threads == the block size (<= kCsrThreads)
  int row_threads;    // power of two
  int64_t col_tiles;  // ceil(inner / (col_threads * vec))
};

struct CsrShape {
  int64_t outer, rows, inner, segments;
};

struct Plan {
  int64_t outer, rows, inner, segments;
  int64_t chunk_rows;
  int64_t chunk_bound;    // >= total chunks for valid offsets: segments + rows / chunk_rows
  int64_t partial_bound;  // >= total partial rows for valid offsets: 2 * (rows / chunk_rows)
};

using CsrPlan = SegmentPlan<int64_t>;

// Block layout for rows of `inner` columns. With short segments (mean_rows: rows per segment on average) the
// block keeps only the row threads that have rows to fold (at least a warp in all): many small blocks then run
// side by side instead of full blocks whose tree mostly folds identities. The layout depends only on the
// shape, so results stay reproducible.
inline Tiling make_tiling(int64_t inner, int vec, int64_t mean_rows = int64_t(1) << 62) {
  const int64_t column_vectors = (inner + vec - 1) / vec;
  int col_threads = 1;
  while (col_threads < column_vectors && col_threads < kCsrThreads) col_threads *= 2;
  int row_threads = kCsrThreads / col_threads;
  const int min_row_threads = std::max(1, kWarpSize / col_threads);
  while (row_threads > min_row_threads && int64_t(row_threads) * 4 > mean_rows) row_threads /= 2;
  return {vec, col_threads, row_threads, (column_vectors + col_threads - 1) / col_threads};
}

inline Plan make_plan(const CsrShape& shape, const Tiling& tiling) {
  const int64_t tile_columns = std::min<int64_t>(shape.inner, int64_t(tiling.col_threads) * tiling.vec);
  const int64_t by_work = (CsrTuning::kMinChunkElements + tile_columns - 1) / tile_columns;
  const int64_t by_parallelism = (shape.rows + CsrTuning::kTargetChunks - 1) / CsrTuning::kTargetChunks;
  const int64_t chunk_rows = std::max<int64_t>({by_work, by_parallelism, 1});
  const int64_t full_chunks = shape.rows / chunk_rows;
  return {shape.outer, shape.rows, shape.inner, shape.segments, chunk_rows, shape.segments + full_chunks,
          2 * full_chunks};
}

// The chunk `c` of the scanned plan: its segment s, rows [begin, end), and whether it is s's only chunk.
struct ChunkRange {
  int64_t segment, k, begin, end, lo, hi;
};
__device__ __forceinline__ ChunkRange chunk_range(const int64_t* offsets, const CsrPlan* scanned,
                                                  const int64_t* chunk_segment, const Plan& plan, int64_t c) {
  const int64_t s = chunk_segment[c];
  int64_t lo, hi;
  segment_bounds(offsets, s, plan.rows, lo, hi);
  const int64_t k = c - (s > 0 ? scanned[s - 1].chunks : 0);  // chunk index inside the segment
  const int64_t begin = lo + k * plan.chunk_rows;
  const int64_t end = hi < begin + plan.chunk_rows ? hi : begin + plan.chunk_rows;
  return {s, k, begin, end, lo, hi};
}

// Calls body(o, tile, chunk) for each of the block's work items (outer slice, chunk, column tile), a
// grid-stride loop that is block-uniform (the body may synchronize).
template <typename Body>
__device__ __forceinline__ void for_each_chunk(const int64_t* offsets, const CsrPlan* scanned,
                                               const int64_t* chunk_segment, const Plan& plan, const Tiling& tiling,
                                               Body body) {
  const int64_t total_chunks = scanned[plan.segments - 1].chunks;
  const int64_t work = plan.outer * plan.chunk_bound * tiling.col_tiles;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int64_t tile = w % tiling.col_tiles;
    const int64_t c = (w / tiling.col_tiles) % plan.chunk_bound;
    const int64_t o = w / tiling.col_tiles / plan.chunk_bound;
    if (c >= total_chunks) continue;
    body(o, tile, chunk_range(offsets, scanned, chunk_segment, plan, c));
  }
}

template <typename Acc, typename Out, int Vec>
__device__ __forceinline__ void store_segment(Out* out, const Acc (&acc)[Vec], int64_t count, bool mean) {
#pragma unroll
  for (int j = 0; j < Vec; ++j) out[j] = convert<Out>(reducers::segment_value(mean, acc[j], count));
}

// Records the first rule that offsets break at segment s (bad input, prim/util/input_error.cuh): they start at
// 0, never decrease, and end at `rows`. The kernels clamp them either way (segment_bounds).
__device__ __forceinline__ void check_offsets(const InputCheck& check, const int64_t* offsets, int64_t s,
                                              int64_t segments, int64_t rows) {
  const int64_t a = offsets[s], b = offsets[s + 1];
  const auto report = [&](int64_t position, int64_t value, InputRule rule, int64_t bound) {
    record_input_error(check.record, check.op, check.argument, position, value, rule, bound);
  };
  if (s == 0 && a != 0) report(0, a, InputRule::kNonZeroStart, 0);
  if (b < a) {
    report(s + 1, b, InputRule::kDecreasing, a);
  } else if (s + 1 == segments && b != rows) {
    report(s + 1, b, b > rows ? InputRule::kPastEnd : InputRule::kNotAtEnd, rows);
  }
}

__global__ void __launch_bounds__(kCsrThreads) count_chunks_kernel(const int64_t* __restrict__ offsets, Plan plan,
                                                                   InputCheck check, CsrPlan* __restrict__ counts) {
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < plan.segments;
       s += int64_t(gridDim.x) * blockDim.x) {
    if (check.record != nullptr) check_offsets(check, offsets, s, plan.segments, plan.rows);
    int64_t lo, hi;
    segment_bounds(offsets, s, plan.rows, lo, hi);
    counts[s] = plan_segment<int64_t>(hi - lo, plan.chunk_rows, /*store_empty=*/true);
  }
}

// chunk_segment[c] = the segment of chunk c, for c < min(total chunks, chunk_bound).
__global__ void __launch_bounds__(kCsrThreads) chunk_map_kernel(const CsrPlan* __restrict__ scanned, Plan plan,
                                                                int64_t* __restrict__ chunk_segment) {
  const int64_t total = scanned[plan.segments - 1].chunks;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < plan.chunk_bound && c < total;
       c += int64_t(gridDim.x) * blockDim.x) {
    chunk_segment[c] = find_segment(scanned, plan.segments, c, [](const CsrPlan& p) { return p.chunks; });
  }
}

template <typename In, typename Acc, typename Out, typename Op, int Vec>
__global__ void __launch_bounds__(kCsrThreads, CsrTuning::min_blocks(Vec * sizeof(Acc)))
    chunk_kernel(const In* __restrict__ src, const int64_t* __restrict__ offsets, const CsrPlan* __restrict__ scanned,
                 const int64_t* __restrict__ chunk_segment, Plan plan, Tiling tiling, bool mean, Out* __restrict__ out,
                 Acc* __restrict__ partials) {
  __shared__ alignas(16) unsigned char shared_raw[kCsrThreads * CsrTuning::kMaxVecBytes];
  Acc* shared = reinterpret_cast<Acc*>(shared_raw);
  const int ct = threadIdx.x % tiling.col_threads, rt = threadIdx.x / tiling.col_threads;
  for_each_chunk(offsets, scanned, chunk_segment, plan, tiling, [&](int64_t o, int64_t tile, const ChunkRange& chunk) {
    const int64_t column = (tile * tiling.col_threads + ct) * Vec;
    const bool active = column < plan.inner;
    const In* base = src + o * plan.rows * plan.inner + column;
    Acc acc[Vec];
    fold_items<Op, false, Vec, CsrTuning::kUnroll>(
        chunk.begin + rt, active ? chunk.end : chunk.begin, tiling.row_threads,
        [&](int64_t r) { return FoldItem<Vec, In, Acc>{load_vec<Vec>(base + r * plan.inner), Acc(1)}; }, acc);
    block_fold_tree<Op, Vec>(tiling.col_threads, tiling.row_threads, rt, acc, shared);
    if (rt != 0 || !active) return;
    const CsrPlan before = chunk.segment > 0 ? scanned[chunk.segment - 1] : CsrPlan{0, 0, 0};
    if (scanned[chunk.segment].chunks - before.chunks == 1) {
      store_segment<Acc, Out, Vec>(out + (o * plan.segments + chunk.segment) * plan.inner + column, acc,
                                   chunk.hi - chunk.lo, mean);
    } else {
      const int64_t slot = before.partials + chunk.k;
      if (slot >= plan.partial_bound) return;  // only with invalid (overlapping) offsets: never write past
#pragma unroll
      for (int j = 0; j < Vec; ++j) partials[(o * plan.partial_bound + slot) * plan.inner + column + j] = acc[j];
    }
  });
}

// Folds each hot segment's partial rows (in chunk order) and stores its final value. A block looks at
// kCsrThreads segments at once, so skipping the (usually many) single-chunk segments costs one pass.
template <typename Acc, typename Out, typename Op, int Vec>
__global__ void __launch_bounds__(kCsrThreads) combine_kernel(const Acc* __restrict__ partials,
                                                              const int64_t* __restrict__ offsets,
                                                              const CsrPlan* __restrict__ scanned, Plan plan,
                                                              Tiling tiling, bool mean, Out* __restrict__ out) {
  __shared__ alignas(16) unsigned char shared_raw[kCsrThreads * CsrTuning::kMaxVecBytes];
  __shared__ bool needs[kCsrThreads];
  Acc* shared = reinterpret_cast<Acc*>(shared_raw);
  const int ct = threadIdx.x % tiling.col_threads, rt = threadIdx.x / tiling.col_threads;
  const int64_t groups = (plan.segments + kCsrThreads - 1) / kCsrThreads;
  for (int64_t w = blockIdx.x; w < plan.outer * groups; w += gridDim.x) {
    const int64_t o = w / groups, group_first = (w % groups) * kCsrThreads;
    const int64_t mine = group_first + threadIdx.x;
    const bool need = mine < plan.segments && scanned[mine].hot - (mine > 0 ? scanned[mine - 1].hot : 0) > 0;
    needs[threadIdx.x] = need;
    if (!__syncthreads_or(need)) continue;
    for (int i = 0; i < kCsrThreads; ++i) {
      if (!needs[i]) continue;  // block-uniform (shared)
      const int64_t s = group_first + i;
      const int64_t p_begin = s > 0 ? scanned[s - 1].partials : 0;
      const int64_t p_end = std::min<int64_t>(scanned[s].partials, plan.partial_bound);
      int64_t lo, hi;
      segment_bounds(offsets, s, plan.rows, lo, hi);
      for (int64_t tile = 0; tile < tiling.col_tiles; ++tile) {
        const int64_t column = (tile * tiling.col_threads + ct) * Vec;
        const bool active = column < plan.inner;
        const Acc* base = partials + o * plan.partial_bound * plan.inner + column;
        Acc acc[Vec];
        fold_items<Op, false, Vec, CsrTuning::kUnroll>(
            p_begin + rt, active ? p_end : p_begin, tiling.row_threads,
            [&](int64_t p) { return FoldItem<Vec, Acc, Acc>{load_vec<Vec>(base + p * plan.inner), Acc(1)}; }, acc);
        block_fold_tree<Op, Vec>(tiling.col_threads, tiling.row_threads, rt, acc, shared);
        if (rt == 0 && active) {
          store_segment<Acc, Out, Vec>(out + (o * plan.segments + s) * plan.inner + column, acc, hi - lo, mean);
        }
      }
    }
    __syncthreads();  // needs[] is rewritten by the next group
  }
}

// The scanned plan and the chunk -> segment map (three small passes: plans, their CUB scan, the map).
struct ChunkIndex {
  const CsrPlan* scanned;        // inclusive scan of per-segment plans, [segments]
  const int64_t* chunk_segment;  // [chunk_bound]
};

// `check`: where broken offsets are recorded (its record may be null).
inline ChunkIndex index_chunks(const int64_t* offsets, const Plan& plan, const InputCheck& check,
                               Workspace& workspace, cudaStream_t stream) {
  auto* counts = static_cast<CsrPlan*>(workspace.allocate(sizeof(CsrPlan) * plan.segments));
  auto* scanned = static_cast<CsrPlan*>(workspace.allocate(sizeof(CsrPlan) * plan.segments));
  count_chunks_kernel<<<grid_for(plan.segments, kCsrThreads), kCsrThreads, 0, stream>>>(offsets, plan, check,
                                                                                         counts);
  GPUPRIM_LAUNCH_CHECK();
  cub_call(workspace, [&](void* temp, size_t& bytes) {
    return cub::DeviceScan::InclusiveScan(temp, bytes, counts, scanned, SegmentPlanPlus(), plan.segments, stream);
  });
  auto* chunk_segment = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * plan.chunk_bound));
  chunk_map_kernel<<<grid_for(plan.chunk_bound, kCsrThreads), kCsrThreads, 0, stream>>>(scanned, plan,
                                                                                         chunk_segment);
  GPUPRIM_LAUNCH_CHECK();
  return {scanned, chunk_segment};
}

// out [outer, segments, inner] = the Op reduction (mean: a sum divided by the count) of the CSR segments of
// src [outer, rows, inner] (contiguous), Vec columns per thread load (AccVec for the partial rows). Offsets
// that break the CSR rules are clamped and recorded through `check`.
template <typename T, typename Op, int Vec, int AccVec>
void csr_reduce(const T* src, const int64_t* offsets, const CsrShape& shape, bool mean, const InputCheck& check,
                T* out, Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  const Tiling tiling = make_tiling(shape.inner, Vec, shape.rows / shape.segments);
  const int threads = tiling.col_threads * tiling.row_threads;
  const Plan plan = make_plan(shape, tiling);
  const ChunkIndex index = index_chunks(offsets, plan, check, workspace, stream);
  Acc* partials = nullptr;
  if (plan.partial_bound > 0) {
    partials = static_cast<Acc*>(workspace.allocate(sizeof(Acc) * plan.outer * plan.partial_bound * plan.inner));
  }
  auto chunk = chunk_kernel<T, Acc, T, Op, Vec>;
  const int64_t work = plan.outer * plan.chunk_bound * tiling.col_tiles;
  chunk<<<grid_for(work, 1, resident_blocks(chunk, threads)), threads, 0, stream>>>(
      src, offsets, index.scanned, index.chunk_segment, plan, tiling, mean, out, partials);
  GPUPRIM_LAUNCH_CHECK();
  if (plan.partial_bound == 0) return;  // no segment can be longer than one chunk
  const Tiling combine_tiling = make_tiling(shape.inner, AccVec);
  auto combine = combine_kernel<Acc, T, Op, AccVec>;
  const int64_t groups = plan.outer * ((plan.segments + kCsrThreads - 1) / kCsrThreads);
  combine<<<grid_for(groups, 1, resident_blocks(combine, kCsrThreads)), kCsrThreads, 0, stream>>>(
      partials, offsets, index.scanned, plan, combine_tiling, mean, out);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace segmented
}  // namespace gpuprim
