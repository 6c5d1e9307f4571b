// spmm's device pieces (spmm_cuda.cu): a row's chunks reduced in the order of
// prim/device/merge_path/row_order.h (lane chunks for F == 1, column chunks for F > 1), the rows registered for
// the split pass, and the loop that hands (item, column) work to groups of lanes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/graph/spmm/spmm_launch.h"
#include "prim/device/merge_path/merge_path.h"
#include "prim/device/merge_path/row_order.h"
#include "prim/device/merge_path/tuning_merge_path.h"
#include "prim/device/merge_path/work_list.cuh"
#include "prim/util/convert.cuh"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace spmm_chunks {

using Order = merge_path::RowOrder;
constexpr int kThreads = merge_path::MergePathTuning::kThreads;
constexpr int kUnroll = merge_path::MergePathTuning::kColumnUnroll;
static_assert(Order::kLanes == kWarpSize, "a lane chunk's tree is a warp's shuffle tree");

// Lanes per row and columns per lane load (F > 1): a fixed layout per launch.
struct Layout {
  int group;          // lanes per row (power of two, <= 32)
  int64_t col_tiles;  // column passes of group * Vec columns
  int64_t chunk;      // nonzeros per chunk (row_order.h)
  int64_t long_row;   // rows with more nonzeros go to the split pass
};

// Rows registered for the split pass: item[e] is a row, its chunks own the workspace slots from first_chunk[e].
using LongRows = merge_path::WorkList;

// What a chunk reads: the nonzeros' columns and values (null: all ones), the dense operand, the shapes, and the
// check that records a column outside [0, cols) (that nonzero is skipped).
template <typename T, typename I>
struct ChunkInputs {
  const I* col;
  const T* values;
  const T* dense;
  SpmmShape shape;
  InputCheck col_check;
};

// acc <- acc (+) value * weight in the op's order: a fused multiply-add for sums (the CPU uses std::fma).
template <Reduce R, typename Acc>
__device__ __forceinline__ Acc accumulate(Acc acc, Acc value, Acc weight, bool weighted) {
  if constexpr (R == Reduce::kSum) {
    return weighted ? fma(weight, value, acc) : acc + value;
  } else {
    return reducers::Op<R>::combine(acc, weighted ? weight * value : value);
  }
}

// Two partial values combined (chunk values, tree nodes).
template <Reduce R, typename Acc>
__device__ __forceinline__ Acc merge(Acc a, Acc b) {
  return accumulate<R>(a, b, Acc(1), false);
}

template <typename I>
__device__ __forceinline__ void row_bounds(const I* crow, int64_t r, int64_t nnz, int64_t& lo, int64_t& hi) {
  lo = merge_path::clamped_offset(crow, r, nnz);
  hi = std::max(merge_path::clamped_offset(crow, r + 1, nnz), lo);
}

template <typename I>
__device__ __forceinline__ bool in_range(I c, int64_t cols) {
  // One unsigned compare a column (negative ones wrap above the bound), against a bound the loops hoist.
  using U = std::make_unsigned_t<I>;
  constexpr int64_t kLargest = std::numeric_limits<I>::max();
  const U bound = cols > kLargest ? U(kLargest) + 1 : static_cast<U>(cols);
  return static_cast<U>(c) < bound;
}

// ---- F == 1: lane chunks, a warp a chunk.

// The value of the lane chunk [start, start + count) (count <= kLaneChunk), in lane 0 (row_order.h).
template <typename T, typename I, Reduce R>
__device__ __forceinline__ typename AccOf<T>::type lane_chunk(const ChunkInputs<T, I>& in, int64_t start, int64_t count,
                                                              int lane) {
  using Acc = typename AccOf<T>::type;
  const I* col = in.col;
  const T *values = in.values, *dense = in.dense;
  const SpmmShape& shape = in.shape;
  constexpr int kItems = static_cast<int>(Order::kLaneChunk / Order::kLanes);
  I c[kItems];  // -1: past the chunk
  Acc w[kItems], x[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {  // every load of the chunk issued before the first use
    const int64_t p = lane + int64_t(i) * Order::kLanes;
    c[i] = p < count ? col[start + p] : I(-1);
    w[i] = p < count && values != nullptr ? convert<Acc>(values[start + p]) : Acc(1);
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) x[i] = in_range(c[i], shape.cols) ? convert<Acc>(dense[c[i]]) : Acc(0);
  Acc acc = reducers::Op<R>::template identity<Acc>();
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int64_t p = lane + int64_t(i) * Order::kLanes;
    if (p >= count) break;
    if (in_range(c[i], shape.cols)) {
      acc = accumulate<R>(acc, x[i], w[i], values != nullptr);
    } else {
      record_input_error(in.col_check, start + p, static_cast<int64_t>(c[i]));
    }
  }
#pragma unroll
  for (int offset = Order::kLanes / 2; offset > 0; offset /= 2) {
    acc = merge<R>(acc, __shfl_down_sync(kFullMask, acc, offset));
  }
  return acc;
}

// A row of up to kLaneLongRow nonzeros [lo, lo + length), its chunks folded left to right; in lane 0.
template <typename T, typename I, Reduce R>
__device__ __forceinline__ typename AccOf<T>::type lane_row(const ChunkInputs<T, I>& in, int64_t lo, int64_t length,
                                                            int lane) {
  using Acc = typename AccOf<T>::type;
  const int64_t chunk = Order::kLaneChunk;
  Acc total = lane_chunk<T, I, R>(in, lo, std::min(length, chunk), lane);
  for (int64_t start = chunk; start < length; start += chunk) {
    total = merge<R>(total, lane_chunk<T, I, R>(in, lo + start, std::min(length - start, chunk), lane));
  }
  return total;
}

// ---- F > 1: column chunks, a group of lanes spanning the columns, Vec columns a lane.

// The value of the column chunk [start, start + count): each column folded left to right from the identity.
template <typename T, typename I, Reduce R, int Vec>
__device__ __forceinline__ void column_chunk(const ChunkInputs<T, I>& in, int64_t column, int64_t start, int64_t count,
                                             typename AccOf<T>::type (&acc)[Vec]) {
  using Acc = typename AccOf<T>::type;
  const I* col = in.col;
  const T *values = in.values, *dense = in.dense;
  const SpmmShape& shape = in.shape;
#pragma unroll
  for (int v = 0; v < Vec; ++v) acc[v] = reducers::Op<R>::template identity<Acc>();
  const auto fold = [&](int64_t k, I c, Acc weight, const VecOf<Vec, T>& x) {
    if (!in_range(c, shape.cols)) {
      if (column == 0) record_input_error(in.col_check, k, static_cast<int64_t>(c));
      return;
    }
#pragma unroll
    for (int v = 0; v < Vec; ++v) acc[v] = accumulate<R>(acc[v], convert<Acc>(x.items[v]), weight, values != nullptr);
  };
  const int64_t end = start + count;
  int64_t k = start;
  for (; k + kUnroll <= end; k += kUnroll) {  // kUnroll rows of x in flight
    I c[kUnroll];
    Acc w[kUnroll];
    VecOf<Vec, T> x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      c[u] = col[k + u];
      w[u] = values != nullptr ? convert<Acc>(values[k + u]) : Acc(1);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (in_range(c[u], shape.cols))
        x[u] = load_vec<Vec>(dense + static_cast<int64_t>(c[u]) * shape.features + column);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) fold(k + u, c[u], w[u], x[u]);
  }
  for (; k < end; ++k) {
    const I c = col[k];
    VecOf<Vec, T> x;
    if (in_range(c, shape.cols)) x = load_vec<Vec>(dense + static_cast<int64_t>(c) * shape.features + column);
    fold(k, c, values != nullptr ? convert<Acc>(values[k]) : Acc(1), x);
  }
}

template <typename T, int Vec>
__device__ __forceinline__ void store_row(T* out, const typename AccOf<T>::type (&acc)[Vec], int64_t count, bool mean) {
  VecOf<Vec, T> y;
#pragma unroll
  for (int v = 0; v < Vec; ++v) y.items[v] = convert<T>(reducers::segment_value(mean, acc[v], count));
  store_vec<Vec>(out, y);
}

// Every (item, column) of a grid-stride loop over `items` work items, a group of layout.group lanes an item
// and a column tile; body(item, column). No shuffles or barriers: the groups of a warp run apart.
template <int Vec, typename Body>
__device__ __forceinline__ void for_each_item_column(int64_t items, const Layout& layout, int64_t features,
                                                     Body&& body) {
  const int lane = threadIdx.x % layout.group;
  const int64_t groups = int64_t(gridDim.x) * (kThreads / layout.group);
  for (int64_t w = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / layout.group; w < items * layout.col_tiles;
       w += groups) {
    const int64_t column = ((w % layout.col_tiles) * layout.group + lane) * Vec;
    if (column < features) body(w / layout.col_tiles, column);
  }
}

}  // namespace spmm_chunks
}  // namespace gpuprim
