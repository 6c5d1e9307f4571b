// Reduction of source rows into destination rows chosen by an index (index_add, scatter_add, scatter_reduce):
// out[o, index[i], :] receives the reduction of src[o, i, :] over the items i that point at it, finalized once
// against its own value (reducers.h); rows that receive nothing keep theirs. Items whose index is outside
// [0, rows) are skipped. This is where the atomic-vs-deterministic choice is made, once:
//   deterministic (or any reduction but an included-self sum, or a dtype without atomicAdd): the destinations
//     are radix sorted with the item positions and reduced run by run by the sorted front end
//     (sorted_reduce.cuh): bitwise identical on every run;
//   otherwise: one atomicAdd per element (fast; float sums depend on the order the atomics land in).
#pragma once
#include <cstdint>
#include <type_traits>

#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/segmented_reduce/index_keys.cuh"
#include "prim/device/segmented_reduce/reducers.h"
#include "prim/device/segmented_reduce/sorted_reduce.cuh"
#include "prim/util/convert.cuh"
#include "prim/util/input_error.cuh"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace segmented {

// src [outer, items, inner] and out [outer, rows, inner], both contiguous; index [items].
struct ByKeyShape {
  int64_t outer, items, rows, inner;
};

// Sorted item i of slice o: the source row of the item at position positions[i].
template <typename T, typename Pos>
struct GatherRows {
  using Acc = typename AccOf<T>::type;
  static constexpr bool kWeighted = false;
  const T* src;
  const Pos* positions;
  int64_t items, inner;
  template <int Vec>
  __device__ __forceinline__ FoldItem<Vec, T, Acc> load(int64_t o, int64_t i, int64_t col) const {
    const int64_t p = static_cast<int64_t>(positions[i]);
    return {load_vec<Vec>(src + (o * items + p) * inner + col), Acc(1)};
  }
};

// A run's result folded into its destination row: out = finalize(reduce, include_self, out, acc, count, scale).
template <typename T>
struct FinalizeRows {
  using Acc = typename AccOf<T>::type;
  static constexpr int kElementBytes = sizeof(T);
  T* out;
  int64_t rows, inner;
  Reduce reduce;
  bool include_self;
  Acc scale;
  template <int Vec>
  __device__ __forceinline__ void store(int64_t o, int64_t, int64_t key, int64_t col, const Acc (&acc)[Vec],
                                        int64_t count) const {
    T* row = out + (o * rows + key) * inner + col;
    VecOf<Vec, T> v = load_vec<Vec>(row);
#pragma unroll
    for (int j = 0; j < Vec; ++j) {
      v.items[j] = convert<T>(reducers::finalize<T>(reduce, include_self, convert<Acc>(v.items[j]), acc[j], count,
                                                    scale));
    }
    store_vec<Vec>(row, v);
  }
  __device__ __forceinline__ void done(int64_t, int64_t, int64_t) const {}
};

// Non-deterministic included-self sums: one atomicAdd per element.
template <typename T>
constexpr bool kHasAtomicAdd = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                               std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int32_t* p, int32_t v) { atomicAdd(reinterpret_cast<int*>(p), int(v)); }
__device__ __forceinline__ void atomic_add(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockThreads) atomic_sum_kernel(const T* __restrict__ src,
                                                                   const Index* __restrict__ index, ByKeyShape shape,
                                                                   T scale, IndexErrors errors, T* __restrict__ out) {
  const int64_t total = shape.outer * shape.items * shape.inner;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t column = e % shape.inner;
    const int64_t i = (e / shape.inner) % shape.items;
    const int64_t o = e / shape.inner / shape.items;
    const int64_t r = static_cast<int64_t>(index[i]);
    if (r < 0 || r >= shape.rows) {
      if (e < shape.items * shape.inner && column == 0) report_bad_index(errors, i, r);  // once per item
      continue;
    }
    T v = src[e];
    if (scale != T(1)) {
      if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(static_cast<uint64_t>(v) * static_cast<uint64_t>(scale));
      } else {
        v = v * scale;
      }
    }
    atomic_add(out + (o * shape.rows + r) * shape.inner + column, v);
  }
}

// Columns per lane: 16-byte loads of T, at most 32 bytes of Acc per lane.
template <typename T>
constexpr int by_key_vec() {
  using Acc = typename AccOf<T>::type;
  constexpr int by_load = int(16 / sizeof(T));
  constexpr int by_acc = int(32 / sizeof(Acc));
  return by_load < by_acc ? by_load : by_acc;
}

template <typename T, typename Key, typename Pos, typename Index>
void reduce_by_sorted_key(const Index* index, const T* src, const ByKeyShape& shape, Reduce reduce,
                          bool include_self, typename AccOf<T>::type scale, const IndexErrors& errors, T* out,
                          Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  const int64_t n = shape.items;
  Key* keys[2];
  Pos* positions[2];
  for (int b = 0; b < 2; ++b) {
    keys[b] = static_cast<Key*>(workspace.allocate(sizeof(Key) * n));
    positions[b] = static_cast<Pos*>(workspace.allocate(sizeof(Pos) * n));
  }
  make_keys_kernel<Index, Key, Pos><<<grid_for(n, kBlockThreads), kBlockThreads, 0, stream>>>(
      index, n, shape.rows, errors, keys[0], positions[0]);
  GPUPRIM_LAUNCH_CHECK();
  // Stable (destination, position) sort on the key bits that hold [0, rows] (the sentinel included).
  const int sorted = radix_sort::sort_pairs(keys, positions, n, bits_to_hold(uint64_t(shape.rows)), workspace, stream);
  const GatherRows<T, Pos> source{src, positions[sorted], shape.items, shape.inner};
  const FinalizeRows<T> sink{out, shape.rows, shape.inner, reduce, include_self, scale};
  const auto run = [&](auto op, auto vec) {
    reduce_sorted_runs<decltype(op), decltype(vec)::value, Acc, Key, Pos>(
        keys[sorted], n, static_cast<Key>(shape.rows), shape.outer, shape.inner, source, sink, /*dense_rows=*/0,
        /*num_keys=*/nullptr, workspace, stream);
  };
  const auto by_vec = [&](auto op) {
    constexpr int kVec = by_key_vec<T>();
    const bool vector = shape.inner % kVec == 0 && aligned(src, sizeof(T) * kVec) && aligned(out, sizeof(T) * kVec);
    if (vector) return run(op, std::integral_constant<int, kVec>());
    return run(op, std::integral_constant<int, 1>());
  };
  switch (reduce) {
    case Reduce::kMax: return by_vec(reducers::Op<Reduce::kMax>());
    case Reduce::kMin: return by_vec(reducers::Op<Reduce::kMin>());
    case Reduce::kProd: return by_vec(reducers::Op<Reduce::kProd>());
    default: return by_vec(reducers::Op<Reduce::kSum>());  // sum and mean fold sums
  }
}

// out (holding self) receives the reduction of src by index (see the top of this file). scale multiplies sums.
template <typename T, typename Index>
void reduce_by_key(const Index* index, const T* src, const ByKeyShape& shape, Reduce reduce, bool include_self,
                   typename AccOf<T>::type scale, bool deterministic, const IndexErrors& errors, T* out,
                   Workspace& workspace, cudaStream_t stream) {
  if (shape.outer == 0 || shape.items == 0 || shape.rows == 0 || shape.inner == 0) return;
  if constexpr (kHasAtomicAdd<T>) {
    if (!deterministic && reduce == Reduce::kSum && include_self) {
      atomic_sum_kernel<T, Index><<<grid_for(shape.outer * shape.items * shape.inner, kBlockThreads), kBlockThreads,
                                    0, stream>>>(src, index, shape, static_cast<T>(scale), errors, out);
      GPUPRIM_LAUNCH_CHECK();
      return;
    }
  }
  // 32-bit keys and positions when they fit: a faster sort and half the memory.
  if (shape.items < (int64_t(1) << 31) && uint64_t(shape.rows) < (uint64_t(1) << 32) - 1) {
    reduce_by_sorted_key<T, uint32_t, int32_t>(index, src, shape, reduce, include_self, scale, errors, out,
                                               workspace, stream);
  } else {
    reduce_by_sorted_key<T, uint64_t, int64_t>(index, src, shape, reduce, include_self, scale, errors, out,
                                               workspace, stream);
  }
}

}  // namespace segmented
}  // namespace gpuprim
