// Row folds of the segmented reductions: a thread folds Vec adjacent columns of a run of rows (items), kUnroll
// row loads in flight, always in item order; a block adds its threads' partial values in a fixed tree. Every
// order depends only on the shape, never on timing: float results are the same bits on every run.
#pragma once
#include <cstdint>

#include "prim/util/convert.cuh"
#include "prim/util/vec.cuh"

namespace gpuprim {

// One item of a fold: Vec elements of its row and, for weighted folds, the weight they are multiplied by.
template <int Vec, typename In, typename Acc>
struct FoldItem {
  VecOf<Vec, In> values;
  Acc weight;
};

// acc = Op::combine over items begin, begin + step, ... < end of load(i) (a FoldItem), in that order, starting
// from Op's identity. kWeighted: each element is multiplied by its item's weight first.
template <typename Op, bool kWeighted, int Vec, int kUnroll, typename Acc, typename Load>
__device__ __forceinline__ void fold_items(int64_t begin, int64_t end, int64_t step, const Load& load,
                                           Acc (&acc)[Vec]) {
  using Item = decltype(load(begin));
#pragma unroll
  for (int j = 0; j < Vec; ++j) acc[j] = Op::template identity<Acc>();
  const auto add = [&](const Item& item) {
#pragma unroll
    for (int j = 0; j < Vec; ++j) {
      const Acc value = convert<Acc>(item.values.items[j]);
      acc[j] = Op::combine(acc[j], kWeighted ? value * item.weight : value);
    }
  };
  int64_t i = begin;
  for (; i + (kUnroll - 1) * step < end; i += kUnroll * step) {
    Item items[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) items[u] = load(i + u * step);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) add(items[u]);
  }
  for (; i < end; i += step) add(load(i));
}

// The block's row_threads partial values of each column meet in a fixed tree: thread (rt, ct) = threadIdx.x
// = rt * col_threads + ct; threads with rt == 0 end with the block's result in acc. `shared` holds
// blockDim.x * Vec values. Every thread of the block must call it (it synchronizes).
template <typename Op, int Vec, typename Acc>
__device__ __forceinline__ void block_fold_tree(int col_threads, int row_threads, int rt, Acc (&acc)[Vec],
                                                Acc* shared) {
  if (row_threads == 1) return;  // uniform: nothing to combine, no shared memory used
  Acc* mine = shared + threadIdx.x * Vec;
#pragma unroll
  for (int j = 0; j < Vec; ++j) mine[j] = acc[j];
  for (int half = row_threads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (rt < half) {
      const Acc* other = shared + (threadIdx.x + half * col_threads) * Vec;
#pragma unroll
      for (int j = 0; j < Vec; ++j) mine[j] = Op::combine(mine[j], other[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < Vec; ++j) acc[j] = mine[j];
  __syncthreads();  // shared is reused by the caller's next fold
}

}  // namespace gpuprim
