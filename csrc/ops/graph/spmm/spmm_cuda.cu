// Launchers of gpuprim::spmm, in the order of prim/device/merge_path/row_order.h (a row's chunks, each reduced
// by a fixed pattern, folded left to right).
//
//   ranges_kernel  merge-path ranges of rows + nonzeros (a binary search on each range's diagonal); checks crow
//   rows_kernel    a warp (F == 1: lane chunks, short rows through shared-memory tiles) or a group of lanes
//                  spanning the columns (F > 1) finishes each row of its range; rows longer than the split
//                  threshold go to a work list (prim's merge_path::WorkList) for the two passes below instead
//   split_kernel   every chunk of the registered rows, one a warp or group: its value into a workspace slot
//   fold_kernel    each registered row's chunk values folded left to right (F == 1: a warp a row), then stored
// No float atomics: bitwise reproducible, and equal to the CPU kernel (same chunks, trees and fused multiply-adds).
// The device pieces are in spmm_chunks.cuh, the values gradient in spmm_backward_cuda.cu.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ops/graph/spmm/spmm_chunks.cuh"
#include "ops/graph/spmm/spmm_launch.h"
#include "prim/device/merge_path/csr_check.cuh"
#include "prim/device/merge_path/merge_path.h"
#include "prim/device/merge_path/row_order.h"
#include "prim/device/merge_path/tuning_merge_path.h"
#include "prim/util/convert.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace {

using namespace spmm_chunks;  // this op's device pieces
using Tuning = merge_path::MergePathTuning;
constexpr int kMinBlocks = Tuning::kMinBlocks;
constexpr int kLaneMinBlocks = Tuning::kLaneMinBlocks;
constexpr int kFoldLoads = Tuning::kFoldLoads;

// A warp a range. The range's rows go through tiles of kLaneChunk nonzeros: a tile starts at the next row and
// takes the rows (up to 32) that fit whole; its col, values and x are loaded at once (8 loads a lane in flight)
// into shared memory, then each row is a lane chunk read from there, four rows at a time (the tree's levels at
// or above a row's length only combine with the identity, exactly, so they are skipped). A row that fits no tile
// runs its chunks from global memory, or is registered for the split pass above kLaneLongRow.
template <typename T, typename I, Reduce R>
__global__ void __launch_bounds__(kThreads, kLaneMinBlocks)
    lane_rows_kernel(const I* __restrict__ crow, const I* __restrict__ col, const T* __restrict__ values,
                     const T* __restrict__ dense, SpmmShape shape, const int64_t* __restrict__ range_rows,
                     int64_t ranges, bool mean, InputCheck col_check, LongRows long_rows, T* __restrict__ out) {
  using Acc = typename AccOf<T>::type;
  constexpr int kTile = static_cast<int>(Order::kLaneChunk);
  constexpr int kItems = kTile / kWarpSize;
  // A round reduces kGroups rows, a group of kGroupLanes lanes each; a group lane holds kQuarters chunk lanes.
  constexpr int kGroupLanes = 8, kGroups = kWarpSize / kGroupLanes, kQuarters = kWarpSize / kGroupLanes;
  __shared__ Acc tile_x[kThreads / kWarpSize][kTile], tile_w[kThreads / kWarpSize][kTile];
  const int lane = threadIdx.x % kWarpSize;
  Acc* xs = tile_x[threadIdx.x / kWarpSize];
  Acc* ws = tile_w[threadIdx.x / kWarpSize];
  const bool weighted = values != nullptr;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / kWarpSize);
  for (int64_t range = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / kWarpSize; range < ranges; range += warps) {
    const int64_t row_end = std::max(range_rows[range + 1], range_rows[range]);
    // crow[first] and crow[first + lane + 1] (row first + lane's end), clamped only where they are used: the next
    // tile's entries load while this tile is reduced.
    I start_entry = 0, end_entry = 0;
    const auto load_offsets = [&](int64_t first) {
      start_entry = crow[first];
      end_entry = first + lane < row_end ? crow[first + lane + 1] : I(0);
    };
    if (range_rows[range] < row_end) load_offsets(range_rows[range]);
    for (int64_t first = range_rows[range]; first < row_end;) {
      // Row first + lane: [lo, hi) as row_bounds gives it; it fits if it lies inside [start, start + kTile).
      const int64_t start = merge_path::clamp_offset(start_entry, shape.nnz);
      const int64_t end = merge_path::clamp_offset(end_entry, shape.nnz);
      const bool here = first + lane < row_end;
      const int64_t up = __shfl_up_sync(kFullMask, end, 1);
      const int64_t lo = lane == 0 ? start : up;
      const int64_t hi = std::max(end, lo);
      const unsigned fit = __ballot_sync(kFullMask, here && lo >= start && hi <= start + kTile);
      const int rows = fit == kFullMask ? kWarpSize : __ffs(~fit) - 1;  // the rows that fit, in order
      if (rows == 0) {  // row `first` is longer than a tile (or its offsets are bad)
        const int64_t n = __shfl_sync(kFullMask, hi - lo, 0);
        if (n > Tuning::kLaneLongRow) {
          if (lane == 0) long_rows.push(first, n, Order::kLaneChunk);
        } else {
          const Acc total = lane_row<T, I, R>({col, values, dense, shape, col_check}, start, n, lane);
          if (lane == 0) out[first] = convert<T>(reducers::segment_value(mean, total, n));
        }
        ++first;
        if (first < row_end) load_offsets(first);
        continue;
      }
      // Positions inside the tile fit 32 bits: [row_lo, row_hi) of the rows that fit, relative to its start.
      const int tile_items = static_cast<int>(__shfl_sync(kFullMask, hi, rows - 1) - start);
      const int row_lo = static_cast<int>(lo - start), row_hi = static_cast<int>(hi - start);
      const I* tile_col = col + start;
      const T* tile_values = weighted ? values + start : nullptr;
      I c[kItems];
      Acc w[kItems], x[kItems];
#pragma unroll
      for (int i = 0; i < kItems; ++i) {  // the tile's loads, all in flight before the first use
        const int p = lane + i * kWarpSize;
        c[i] = p < tile_items ? tile_col[p] : I(-1);
        w[i] = p < tile_items && weighted ? convert<Acc>(tile_values[p]) : Acc(1);
      }
      if (first + rows < row_end) load_offsets(first + rows);
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        x[i] = in_range(c[i], shape.cols) ? convert<Acc>(dense[c[i]]) : reducers::Op<R>::template identity<Acc>();
      }
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int p = lane + i * kWarpSize;
        if (p < tile_items && !in_range(c[i], shape.cols)) {  // skipped: the identity with weight 1 changes nothing
          record_input_error(col_check, start + p, static_cast<int64_t>(c[i]));
          w[i] = Acc(1);
        }
        xs[p] = x[i];
        if (weighted) ws[p] = w[i];
      }
      __syncwarp();
      // Four rows at a time, a group of 8 lanes each: lane v of a group holds the lane chunk's lanes v, v + 8,
      // v + 16 and v + 24, so the tree's levels 16 and 8 combine in registers and 4, 2, 1 by shuffles within
      // the group: the same tree as 32 lanes, at a quarter of the shuffles.
      const int group = lane / kGroupLanes, v = lane % kGroupLanes;
      for (int round = 0; round < rows; round += kGroups) {
        const int j = round + group;
        const int base = __shfl_sync(kFullMask, row_lo, j < rows ? j : 0);  // every lane shuffles
        const int stop = __shfl_sync(kFullMask, row_hi, j < rows ? j : 0);
        const int n = j < rows ? stop - base : 0;  // <= kTile
        const int longest = static_cast<int>(__reduce_max_sync(kFullMask, static_cast<unsigned>(n)));
        Acc acc[kQuarters];
#pragma unroll
        for (int q = 0; q < kQuarters; ++q) acc[q] = reducers::Op<R>::template identity<Acc>();
        if (longest <= kWarpSize) {  // most rounds: one nonzero a chunk lane at most
#pragma unroll
          for (int q = 0; q < kQuarters; ++q) {
            const int p = v + q * kGroupLanes;
            if (p < n) acc[q] = accumulate<R>(acc[q], xs[base + p], weighted ? ws[base + p] : Acc(1), weighted);
          }
        } else {
#pragma unroll
          for (int q = 0; q < kQuarters; ++q) {
            for (int p = v + q * kGroupLanes; p < n; p += kWarpSize) {
              acc[q] = accumulate<R>(acc[q], xs[base + p], weighted ? ws[base + p] : Acc(1), weighted);
            }
          }
        }
        // Levels at or above the round's longest row combine only with the identity: skipped, exactly.
        if (16 < longest) {
          acc[0] = merge<R>(acc[0], acc[2]);
          acc[1] = merge<R>(acc[1], acc[3]);
        }
        if (8 < longest) acc[0] = merge<R>(acc[0], acc[1]);
        for (int offset = kGroupLanes / 2; offset > 0; offset /= 2) {
          if (offset < longest) acc[0] = merge<R>(acc[0], __shfl_down_sync(kFullMask, acc[0], offset, kGroupLanes));
        }
        if (v == 0 && j < rows) out[first + j] = convert<T>(reducers::segment_value(mean, acc[0], int64_t(n)));
      }
      __syncwarp();
      first += rows;
    }
  }
}

template <typename T, typename I, Reduce R, int Vec>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    column_rows_kernel(const I* __restrict__ crow, const I* __restrict__ col, const T* __restrict__ values,
                       const T* __restrict__ dense, SpmmShape shape, const int64_t* __restrict__ range_rows,
                       int64_t ranges, Layout layout, bool mean, InputCheck col_check, LongRows long_rows,
                       T* __restrict__ out) {
  using Acc = typename AccOf<T>::type;
  const ChunkInputs<T, I> in{col, values, dense, shape, col_check};
  for_each_item_column<Vec>(ranges, layout, shape.features, [&](int64_t range, int64_t column) {
    const int64_t row_end = std::max(range_rows[range + 1], range_rows[range]);
    for (int64_t r = range_rows[range]; r < row_end; ++r) {
      int64_t lo, hi;
      row_bounds(crow, r, shape.nnz, lo, hi);
      if (hi - lo > layout.long_row) {
        if (column == 0) long_rows.push(r, hi - lo, layout.chunk);
        continue;
      }
      Acc acc[Vec];
      column_chunk<T, I, R, Vec>(in, column, lo, hi - lo, acc);
      store_row<T, Vec>(out + r * shape.features + column, acc, hi - lo, mean);
    }
  });
}

// ---- The split pass (both layouts): chunk values of the registered rows, then their left-to-right folds.

template <typename T, typename I, Reduce R, int Vec>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    split_kernel(const I* __restrict__ crow, const I* __restrict__ col, const T* __restrict__ values,
                 const T* __restrict__ dense, SpmmShape shape, Layout layout, InputCheck col_check, LongRows long_rows,
                 typename AccOf<T>::type* __restrict__ partials) {
  using Acc = typename AccOf<T>::type;
  const ChunkInputs<T, I> in{col, values, dense, shape, col_check};
  const int64_t entries = long_rows.entries(), slots = long_rows.slots();
  if (entries == 0) return;
  const auto chunk_of = [&](int64_t slot, int64_t& start, int64_t& count) {
    const int64_t e = long_rows.entry_of(slot, entries);
    const int64_t r = long_rows.item[e];
    int64_t lo = 0, hi = 0;  // a dropped entry (bad offsets): no nonzeros
    if (r >= 0) row_bounds(crow, r, shape.nnz, lo, hi);
    start = std::min(hi, lo + (slot - long_rows.first_chunk[e]) * layout.chunk);
    count = std::min(hi - start, layout.chunk);  // 0 for a slot past the row's end
  };
  if (shape.features == 1) {
    const int lane = threadIdx.x % kWarpSize;
    const int64_t warps = int64_t(gridDim.x) * (kThreads / kWarpSize);
    for (int64_t slot = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / kWarpSize; slot < slots; slot += warps) {
      int64_t start, count;
      chunk_of(slot, start, count);
      const Acc value = lane_chunk<T, I, R>(in, start, count, lane);
      if (lane == 0) partials[slot] = value;
    }
    return;
  }
  for_each_item_column<Vec>(slots, layout, shape.features, [&](int64_t slot, int64_t column) {
    int64_t start, count;
    chunk_of(slot, start, count);
    Acc acc[Vec];
    column_chunk<T, I, R, Vec>(in, column, start, count, acc);
#pragma unroll
    for (int v = 0; v < Vec; ++v) partials[slot * shape.features + column + v] = acc[v];
  });
}

// F == 1: a warp a registered row. The lanes load kWarpSize * kFoldLoads chunk values at once and every lane
// folds them in order through shuffles (one lane a row left a row's thousands of chunks to 8 loads in flight).
template <typename T, Reduce R, typename I>
__device__ __forceinline__ void fold_lane_chunks(const I* crow, const SpmmShape& shape, int64_t chunk, bool mean,
                                                 const LongRows& long_rows, int64_t entries,
                                                 const typename AccOf<T>::type* partials, T* out) {
  using Acc = typename AccOf<T>::type;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / kWarpSize);
  for (int64_t e = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / kWarpSize; e < entries; e += warps) {
    const int64_t r = long_rows.item[e];
    if (r < 0) continue;  // dropped (bad offsets)
    int64_t lo, hi;
    row_bounds(crow, r, shape.nnz, lo, hi);
    const int64_t chunks = (hi - lo + chunk - 1) / chunk;
    const Acc* piece = partials + long_rows.first_chunk[e];
    Acc total = piece[0];  // the same in every lane
    for (int64_t base = 1; base < chunks; base += kWarpSize * kFoldLoads) {
      Acc next[kFoldLoads];
#pragma unroll
      for (int u = 0; u < kFoldLoads; ++u) {
        const int64_t j = base + u * kWarpSize + lane;
        next[u] = j < chunks ? piece[j] : Acc(0);
      }
#pragma unroll
      for (int u = 0; u < kFoldLoads; ++u) {
#pragma unroll 8
        for (int from = 0; from < kWarpSize; ++from) {  // every lane shuffles; chunk base + u * 32 + from
          const Acc value = __shfl_sync(kFullMask, next[u], from);
          if (base + u * kWarpSize + from < chunks) total = merge<R>(total, value);
        }
      }
    }
    if (lane == 0) out[r] = convert<T>(reducers::segment_value(mean, total, hi - lo));
  }
}

template <typename T, typename I, Reduce R, int Vec>
__global__ void __launch_bounds__(kThreads)
    fold_kernel(const I* __restrict__ crow, SpmmShape shape, Layout layout, bool mean, LongRows long_rows,
                const typename AccOf<T>::type* __restrict__ partials, T* __restrict__ out) {
  using Acc = typename AccOf<T>::type;
  const int64_t entries = long_rows.entries();
  if (shape.features == 1) {
    fold_lane_chunks<T, R>(crow, shape, layout.chunk, mean, long_rows, entries, partials, out);
    return;
  }
  for_each_item_column<Vec>(entries, layout, shape.features, [&](int64_t e, int64_t column) {
    const int64_t r = long_rows.item[e];
    if (r < 0) return;  // dropped (bad offsets)
    int64_t lo, hi;
    row_bounds(crow, r, shape.nnz, lo, hi);
    const int64_t chunks = (hi - lo + layout.chunk - 1) / layout.chunk;
    const Acc* piece = partials + long_rows.first_chunk[e] * shape.features + column;
    Acc total[Vec];
#pragma unroll
    for (int v = 0; v < Vec; ++v) total[v] = piece[v];
    int64_t j = 1;
    for (; j + kFoldLoads <= chunks; j += kFoldLoads) {  // the loads of kFoldLoads chunks in flight at once
      Acc next[kFoldLoads][Vec];
#pragma unroll
      for (int u = 0; u < kFoldLoads; ++u) {
#pragma unroll
        for (int v = 0; v < Vec; ++v) next[u][v] = piece[(j + u) * shape.features + v];
      }
#pragma unroll
      for (int u = 0; u < kFoldLoads; ++u) {
#pragma unroll
        for (int v = 0; v < Vec; ++v) total[v] = merge<R>(total[v], next[u][v]);
      }
    }
    for (; j < chunks; ++j) {
#pragma unroll
      for (int v = 0; v < Vec; ++v) total[v] = merge<R>(total[v], piece[j * shape.features + v]);
    }
    store_row<T, Vec>(out + r * shape.features + column, total, hi - lo, mean);
  });
}

// range_rows[i] = the first row range i finishes (i <= ranges); and the CSR rules of every crow entry.
template <typename I>
__global__ void __launch_bounds__(kThreads) ranges_kernel(const I* __restrict__ crow, SpmmShape shape, int64_t ranges,
                                                          InputCheck crow_check, int64_t* __restrict__ range_rows) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= ranges; i += stride) {
    range_rows[i] = merge_path::range_first_row(i, ranges, crow, shape.rows, shape.nnz);
  }
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= shape.rows; r += stride) {
    merge_path::check_crow_entry(crow_check, crow, r, shape.rows, shape.nnz);
  }
}

// Widest load (16 bytes at most) that divides the row length and suits both row pointers; only 1 or the
// widest are instantiated, to keep compile time down.
template <typename T>
int vector_width(int64_t features, const void* dense, const void* out) {
  constexpr int widest = 16 / sizeof(T);
  return features % widest == 0 && aligned(dense, 16) && aligned(out, 16) ? widest : 1;
}

template <typename T, typename I, Reduce R, int Vec>
void run(const I* crow, const I* col, const T* values, const T* dense, const SpmmShape& shape, bool mean,
         const InputCheck& crow_check, const InputCheck& col_check, T* out, Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  const bool lanes = shape.features == 1;
  Layout layout{kWarpSize, 1, merge_path::chunk_size(shape.features), Tuning::kLaneLongRow};
  if (!lanes) {
    const int64_t column_vectors = (shape.features + Vec - 1) / Vec;
    int group = 1;
    while (group < column_vectors && group < kWarpSize) group *= 2;
    layout = Layout{group, (column_vectors + group - 1) / group, layout.chunk, layout.chunk};
  }
  // Registered rows and their chunk slots, bounded by what nnz allows.
  const int64_t capacity = shape.nnz / (layout.long_row + 1) + 1;
  const int64_t slots = shape.nnz / layout.chunk + capacity;
  auto* counter = static_cast<unsigned long long*>(workspace.allocate(sizeof(unsigned long long)));
  auto* entries = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * 2 * capacity));
  const LongRows long_rows{counter, entries, entries + capacity, capacity, slots};
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), stream));

  auto rows_lanes = lane_rows_kernel<T, I, R>;
  auto rows_columns = column_rows_kernel<T, I, R, Vec>;
  const int64_t resident = lanes ? resident_blocks(rows_lanes, kThreads) : resident_blocks(rows_columns, kThreads);
  const int64_t groups = resident * (kThreads / layout.group) / layout.col_tiles;
  const int64_t ranges = std::max<int64_t>(
      1, std::min(groups, (shape.rows + shape.nnz + Tuning::kMinRangeItems - 1) / Tuning::kMinRangeItems));
  auto* range_rows = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * (ranges + 1)));
  ranges_kernel<I><<<grid_for(std::max(ranges + 1, shape.rows + 1), kThreads), kThreads, 0, stream>>>(
      crow, shape, ranges, crow_check, range_rows);
  GPUPRIM_LAUNCH_CHECK();
  const unsigned grid = grid_for(ranges * layout.col_tiles * layout.group, kThreads, resident);
  if (lanes) {
    rows_lanes<<<grid, kThreads, 0, stream>>>(crow, col, values, dense, shape, range_rows, ranges, mean, col_check,
                                              long_rows, out);
  } else {
    rows_columns<<<grid, kThreads, 0, stream>>>(crow, col, values, dense, shape, range_rows, ranges, layout, mean,
                                                col_check, long_rows, out);
  }
  GPUPRIM_LAUNCH_CHECK();
  if (shape.nnz <= layout.long_row) return;  // no row can be long
  auto* partials = static_cast<Acc*>(workspace.allocate(sizeof(Acc) * slots * shape.features));
  auto split = split_kernel<T, I, R, Vec>;
  split<<<unsigned(resident_blocks(split, kThreads)), kThreads, 0, stream>>>(crow, col, values, dense, shape, layout,
                                                                             col_check, long_rows, partials);
  GPUPRIM_LAUNCH_CHECK();
  auto fold = fold_kernel<T, I, R, Vec>;
  fold<<<unsigned(resident_blocks(fold, kThreads)), kThreads, 0, stream>>>(crow, shape, layout, mean, long_rows,
                                                                           partials, out);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void spmm_cuda_launch(const void* crow, const void* col, DType index_type, const void* values, const void* dense,
                      DType type, SpmmShape shape, Reduce reduce, const InputCheck& crow_check,
                      const InputCheck& col_check, void* out, Workspace& workspace, cudaStream_t stream) {
  if (shape.rows == 0 || shape.features == 0) return;
  dispatch<FloatingTypes>("spmm", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch<IndexTypes>("spmm", index_type, [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      const auto go = [&](auto op_tag, auto vec_tag) {
        constexpr Reduce R = decltype(op_tag)::value;
        constexpr int Vec = decltype(vec_tag)::value;
        run<T, I, R, Vec>(static_cast<const I*>(crow), static_cast<const I*>(col), static_cast<const T*>(values),
                          static_cast<const T*>(dense), shape, reduce == Reduce::kMean, crow_check, col_check,
                          static_cast<T*>(out), workspace, stream);
      };
      const auto with_op = [&](auto vec_tag) {
        if (reduce == Reduce::kMax)
          go(std::integral_constant<Reduce, Reduce::kMax>{}, vec_tag);
        else if (reduce == Reduce::kMin)
          go(std::integral_constant<Reduce, Reduce::kMin>{}, vec_tag);
        else
          go(std::integral_constant<Reduce, Reduce::kSum>{}, vec_tag);
      };
      constexpr int kWidest = 16 / sizeof(T);
      if (vector_width<T>(shape.features, dense, out) == kWidest) {
        with_op(std::integral_constant<int, kWidest>{});
      } else {
        with_op(std::integral_constant<int, 1>{});
      }
    });
  });
}

}  // namespace gpuprim
