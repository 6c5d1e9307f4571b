// Kernels and launchers of gpuprim::embedding_bag (forward) and its deterministic backward.
//
// Forward: one warp per bag (a group of 4-16 lanes for short rows); each lane holds Vec adjacent columns
// (16-byte loads when the row allows), walks the bag's indices in order (kUnroll rows in flight) and
// accumulates in fp32 (fp64 for double). max keeps the first maximum's row. Bags longer than
// kEmbeddingBagLongBag are skipped here and split across blocks by embedding_bag_long_cuda.cu.
//
// Backward (weight): every contribution is a (key, position) pair:
//   sum/mean  key = weight row of indices[p], value = bag of p (with per_sample_weights: p, and its bag
//             from bag_of); its source row is grad[bag] (times per_sample_weights[p], or over the bag's size
//             for mean);
//   max       key = row * D + column of max_indices[b, column], position b * D + column; its source is that
//             one element of grad (rows of width 1).
// Unused pairs (padding_idx, out-of-range index, position in no bag) get the sentinel key (num_keys), which
// sorts last and is skipped.
//   1. prep kernel   keys and values (and bag_of for sum with per_sample_weights)
//   2. radix sort    stable sort of the pairs by the key bits that hold [0, num_keys]
//   3. reduction     prim's sorted-key segmented reduction (prim/device/segmented_reduce/sorted_reduce.cuh):
//                    runs of equal keys folded in sorted (= position) order in fp32, hot rows split across
//                    chunks; dense sum/mean write every table row exactly once (zeros for rows without pairs),
//                    sparse ones every distinct row's slot, then zeros past num_rows
// Every order depends only on the data and the shapes, never on timing: bitwise identical on every run. No
// float atomics, no host sync.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ops/embedding/embedding_bag/embedding_bag_launch.h"
#include "ops/embedding/embedding_bag/embedding_bag_rows.cuh"
#include "prim/device/fill/zero_past_count.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/segmented_reduce/reducers.h"
#include "prim/device/segmented_reduce/sorted_reduce.cuh"
#include "prim/util/convert.cuh"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace {

constexpr int kWarp = kWarpSize;
constexpr int kThreads = kBlockThreads;
constexpr int kWarpsPerBlock = kThreads / kWarp;
using embedding_bag_rows::kUnroll;
using embedding_bag_rows::used;

// ---------------------------------------------------------------- bad input
// The offsets' rules at bag b: they start at 0, never decrease and end at or before len(indices) (with
// include_last_offset: at it). bounds are the offsets, then len(indices) appended without include_last_offset.
// The kernels clamp them either way (segment_bounds). One predicate first: a good call pays a few compares.
__device__ __forceinline__ void check_bounds(const EmbeddingBagChecks& checks, const int64_t* bounds, int64_t b,
                                             const EmbeddingBagShape& s) {
  const int64_t a = bounds[b], next = bounds[b + 1];
  const bool closes = b + 1 < s.bags || checks.include_last_offset;  // bounds[b + 1] is a user offset
  const bool at_end = b + 1 == s.bags;
  if (!((b == 0 && a != 0) || (closes ? next < a || (at_end && next != s.nnz) : a > s.nnz))) return;
  const InputCheck& check = checks.offsets;
  const auto report = [&](int64_t position, int64_t value, InputRule rule, int64_t bound) {
    record_input_error(check.record, check.op, check.argument, position, value, rule, bound);
  };
  if (b == 0 && a != 0) report(0, a, InputRule::kNonZeroStart, 0);
  if (closes) {
    if (next < a) report(b + 1, next, InputRule::kDecreasing, a);
    if (at_end && next != s.nnz) report(b + 1, next, InputRule::kNotAtEnd, s.nnz);
  } else if (a > s.nnz) {
    report(b, a, InputRule::kPastEnd, s.nnz);
  }
}

// ---------------------------------------------------------------- forward
// Max: a template flag, so sum/mean do not carry max's int64 argmax registers (higher occupancy).
template <typename T, typename I, int Vec, bool Max>
__global__ void __launch_bounds__(kThreads) forward_kernel(const T* __restrict__ weight, const I* __restrict__ indices,
                                                           const int64_t* __restrict__ bounds,
                                                           const T* __restrict__ psw, EmbeddingBagShape s,
                                                           EmbeddingBagMode mode, int group, int64_t long_bag,
                                                           LongBags long_bags, EmbeddingBagChecks checks,
                                                           T* __restrict__ out,
                                                           int64_t* __restrict__ bag_size,
                                                           int64_t* __restrict__ max_indices) {
  using Acc = typename AccOf<T>::type;
  // `group` lanes (a power of two dividing the warp) per bag: short rows do not leave most of a warp idle.
  const int lane = threadIdx.x % group;
  const int per_block = kThreads / group;
  const unsigned mask =
      group == kWarp ? 0xffffffffu : ((1u << group) - 1u) << ((threadIdx.x % kWarp) / group * group);
  for (int64_t b = int64_t(blockIdx.x) * per_block + threadIdx.x / group; b < s.bags;
       b += int64_t(gridDim.x) * per_block) {
    int64_t lo, hi;
    segment_bounds(bounds, b, s.nnz, lo, hi);
    if (lane == 0 && checks.from_offsets && checks.offsets.record != nullptr) check_bounds(checks, bounds, b, s);
    if (hi - lo > long_bag) {  // embedding_bag_long_cuda.cu's bag (a group-uniform branch)
      if (lane == 0) {
        *long_bags.flag = long_bags.token;  // every writer writes the same value
        long_bags.tickets[lo / long_bag] = 0;
      }
      continue;
    }
    // Used indices of the bag (for mean and bag_size), counted by the bag's lanes (a group-uniform loop).
    // A bad index is skipped below; this lane's first one is recorded after the loop (no call inside it).
    int64_t count = 0, bad_p = -1, bad_index = 0;
    for (int64_t p0 = lo; p0 < hi; p0 += group) {
      const int64_t p = p0 + lane;
      const int64_t index = p < hi ? static_cast<int64_t>(indices[p]) : 0;
      const bool in_range = static_cast<uint64_t>(index) < static_cast<uint64_t>(s.num_weights);
      if (!in_range && bad_p < 0) bad_p = p, bad_index = index;
      const bool ok = p < hi && in_range && index != s.padding_idx;
      count += __popc(__ballot_sync(mask, ok) & mask);
    }
    if (bad_p >= 0) record_input_error(checks.indices, bad_p, bad_index);
    if (lane == 0) bag_size[b] = count;
    for (int64_t col = int64_t(lane) * Vec; col < s.dim; col += int64_t(group) * Vec) {
      Acc acc[Vec];
      int64_t arg[Max ? Vec : 1];
#pragma unroll
      for (int j = 0; j < Vec; ++j) acc[j] = Acc(0);
#pragma unroll
      for (int j = 0; j < (Max ? Vec : 1); ++j) arg[j] = -1;
      const auto fold = [&](int64_t p, const VecOf<Vec, T>& row, int64_t r) {
        if constexpr (Max) {
#pragma unroll
          for (int j = 0; j < Vec; ++j) {
            const Acc v = convert<Acc>(row.items[j]);
            if (arg[j] < 0 || v > acc[j]) {  // the first maximum wins (as torch)
              acc[j] = v;
              arg[j] = r;
            }
          }
        } else {
          const Acc scale = psw ? convert<Acc>(psw[p]) : Acc(1);
#pragma unroll
          for (int j = 0; j < Vec; ++j) acc[j] += scale * convert<Acc>(row.items[j]);
        }
      };
      if constexpr (sizeof(T) == 2) {
        embedding_bag_rows::for_each_row<Vec>(weight, indices, s, lo, hi, col, fold);
      } else {
        // The same rows in the same order, the loop written out: through for_each_row the fp32 bags ran
        // slower and the 16-bit ones faster (docs/experiments/embedding_bag.md).
        for (int64_t p = lo; p < hi; p += kUnroll) {
          embedding_bag_rows::Batch<Vec, T> batch;
          batch.load(weight, indices, s, p, hi, col);
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            if (batch.ok[u]) fold(p + u, batch.rows[u], batch.r[u]);
          }
        }
      }
      VecOf<Vec, T> result;
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        const Acc v = mode == EmbeddingBagMode::kMean && count > 0 ? acc[j] / static_cast<Acc>(count) : acc[j];
        result.items[j] = convert<T>(v);
      }
      store_vec<Vec>(out + b * s.dim + col, result);
      if constexpr (Max) {
#pragma unroll
        for (int j = 0; j < Vec; ++j) max_indices[b * s.dim + col + j] = arg[j];
      }
    }
  }
}

template <typename T, typename I>
void forward(const T* weight, const I* indices, const int64_t* bounds, const T* psw, const EmbeddingBagShape& s,
             EmbeddingBagMode mode, const EmbeddingBagChecks& checks, LongBags long_bags, T* out,
             int64_t* bag_size, int64_t* max_indices, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const bool wide = s.dim % kVec == 0 && aligned(weight, 16) && aligned(out, 16);
  auto launch = [&](auto kernel, int vec) {
    const int group = embedding_bag_rows::lanes_per_row(s.dim, vec);
    kernel<<<grid_for(s.bags, kThreads / group, 8 * resident_blocks(kernel, kThreads)), kThreads, 0, stream>>>(
        weight, indices, bounds, psw, s, mode, group, kEmbeddingBagLongBag, long_bags, checks, out, bag_size,
        max_indices);
  };
  const bool max = mode == EmbeddingBagMode::kMax;
  if (wide) {
    max ? launch(forward_kernel<T, I, kVec, true>, kVec) : launch(forward_kernel<T, I, kVec, false>, kVec);
  } else {
    max ? launch(forward_kernel<T, I, 1, true>, 1) : launch(forward_kernel<T, I, 1, false>, 1);
  }
  GPUPRIM_LAUNCH_CHECK();
}

// ---------------------------------------------------------------- backward: pairs
// sum/mean: key = row (or the sentinel). With per_sample_weights (bag_of != nullptr): value = position and
// bag_of = the bag of the position (-1: none); without: value = the bag itself (one dependent load less in the
// reduction; the stable sort still orders a row's pairs by position, hence by bag). mean (mean_weight not
// null): also each bag's weight 1 / its size, divided once per bag (as the CPU kernel) instead of once per pair
// and column vector in the reduction.
template <typename I, typename K, typename V, typename Acc>
__global__ void __launch_bounds__(kThreads) prep_sum_kernel(const I* __restrict__ indices,
                                                            const int64_t* __restrict__ bounds, EmbeddingBagShape s,
                                                            K* __restrict__ keys, V* __restrict__ values,
                                                            V* __restrict__ bag_of,
                                                            const int64_t* __restrict__ bag_size,
                                                            Acc* __restrict__ mean_weight) {
  const int64_t items = mean_weight != nullptr ? std::max(s.nnz, s.bags) : s.nnz;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < items; p += int64_t(gridDim.x) * blockDim.x) {
    if (mean_weight != nullptr && p < s.bags) {
      const int64_t size = bag_size[p];
      mean_weight[p] = Acc(1) / static_cast<Acc>(size > 1 ? size : int64_t(1));
    }
    if (p >= s.nnz) continue;
    const int64_t b = segment_of_row(bounds, s.bags, s.nnz, p);
    const int64_t r = static_cast<int64_t>(indices[p]);
    keys[p] = static_cast<K>(b >= 0 && used(r, s) ? r : s.num_weights);
    if (bag_of != nullptr) {
      values[p] = static_cast<V>(p);
      bag_of[p] = static_cast<V>(b);
    } else {
      values[p] = static_cast<V>(b);
    }
  }
}

// max: item i = b * D + column; key = max_indices[i] * D + column (or the sentinel num_weights * D), value = i.
template <typename K, typename V>
__global__ void __launch_bounds__(kThreads) prep_max_kernel(const int64_t* __restrict__ max_indices,
                                                            EmbeddingBagShape s, K* __restrict__ keys,
                                                            V* __restrict__ values) {
  const int64_t n = s.bags * s.dim;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = max_indices[i];
    keys[i] = static_cast<K>(r >= 0 && r < s.num_weights ? r * s.dim + i % s.dim : s.num_weights * s.dim);
    values[i] = static_cast<V>(i);
  }
}

// ---------------------------------------------------------------- backward: the sorted pairs' reduction
// Sorted pair i: the grad row of its bag (value = the bag, or its position and bag_of[position] with
// per_sample_weights), weighted by per_sample_weights[position] or, for mean, the bag's 1 / size.
template <typename T, typename V, bool Weighted>
struct BagRows {
  using Acc = typename AccOf<T>::type;
  static constexpr bool kWeighted = Weighted;
  const T* grad;            // rows of `width` elements
  const V* positions;       // sorted values of the pairs
  const V* bag_of;          // position -> bag (sum with per_sample_weights); nullptr: the value is the bag
  const T* psw;             // weights per position, or nullptr
  const Acc* mean_weight;   // mean: per bag, 1 / its size (written by prep_sum_kernel)
  int64_t width;
  template <int Vec>
  __device__ __forceinline__ FoldItem<Vec, T, Acc> load(int64_t, int64_t i, int64_t col) const {
    const int64_t p = static_cast<int64_t>(positions[i]);
    const int64_t row = bag_of ? static_cast<int64_t>(bag_of[p]) : p;
    FoldItem<Vec, T, Acc> item;
    item.values = load_vec<Vec>(grad + row * width + col);
    item.weight = Acc(1);
    if constexpr (Weighted) {
      item.weight = psw ? convert<Acc>(psw[p]) : mean_weight[row];
    }
    return item;
  }
};

// A weight row's gradient: out + key * width (dense), or out + run * width with rows[run] = key (sparse).
// Dense stores are evict-first, so that the table streaming through L2 does not evict the grad rows gathered.
// ByFreq (scale_grad_by_freq): the row's sum times 1 / its pair count. A template flag, so that the default
// path's kernels stay exactly as they were (a runtime flag changed their register allocation).
template <typename T, bool ByFreq>
struct GradRows {
  using Acc = typename AccOf<T>::type;
  static constexpr int kElementBytes = sizeof(T);
  T* out;
  int64_t width;
  int64_t* rows;  // sparse only
  bool sparse;
  bool streaming;
  template <int Vec>
  __device__ __forceinline__ void store(int64_t, int64_t run, int64_t key, int64_t col, const Acc (&acc)[Vec],
                                        int64_t count) const {
    VecOf<Vec, T> result;
    if constexpr (ByFreq) {
      const Acc freq = Acc(1) / static_cast<Acc>(count > 0 ? count : int64_t(1));
#pragma unroll
      for (int j = 0; j < Vec; ++j) result.items[j] = convert<T>(acc[j] * freq);
    } else {
#pragma unroll
      for (int j = 0; j < Vec; ++j) result.items[j] = convert<T>(acc[j]);
    }
    T* dst = out + (sparse ? run : key) * width + col;
    if (streaming) {
      store_vec_streaming<Vec>(dst, result);
    } else {
      store_vec<Vec>(dst, result);
    }
  }
  __device__ __forceinline__ void done(int64_t, int64_t run, int64_t key) const {
    if (sparse) rows[run] = key;
  }
};

// Steps 3-6 on sorted pairs (prim's sorted-key segmented reduction). dense_rows > 0 (dense sum/mean): out has
// that many rows, each written exactly once (out need not be zeroed). Otherwise out must be zero on entry.
template <typename T, typename K, typename V>
void reduce_pairs(const K* keys, const V* positions, int64_t n, K sentinel, const T* src, int64_t width,
                  const V* bag_of, const T* psw, const typename AccOf<T>::type* mean_weight, T* out,
                  int64_t* rows, bool sparse, bool by_freq, int64_t* num_rows, int64_t dense_rows,
                  Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  const auto run = [&](auto weighted, auto vec, auto freq) {
    const GradRows<T, decltype(freq)::value> sink{out, width, rows, sparse, dense_rows > 0};
    const BagRows<T, V, decltype(weighted)::value> source{src, positions, bag_of, psw, mean_weight, width};
    segmented::reduce_sorted_runs<reducers::Op<Reduce::kSum>, decltype(vec)::value, Acc, K, V>(
        keys, n, sentinel, /*outer=*/1, width, source, sink, dense_rows, num_rows, workspace, stream);
  };
  const auto by_vec = [&](auto weighted, auto freq) {
    constexpr int kVec = 16 / sizeof(T);
    const bool wide = width % kVec == 0 && aligned(src, 16) && aligned(out, 16);
    if (wide) return run(weighted, std::integral_constant<int, kVec>(), freq);
    return run(weighted, std::integral_constant<int, 1>(), freq);
  };
  const auto by_weight = [&](auto freq) {
    if (psw || mean_weight) return by_vec(std::true_type(), freq);
    return by_vec(std::false_type(), freq);
  };
  if (by_freq) {
    by_weight(std::true_type());
  } else {
    by_weight(std::false_type());
  }
}

template <typename T, typename I, typename K, typename V>
void backward_sum(const T* grad, const I* indices, const int64_t* bounds, const int64_t* bag_size, const T* psw,
                  const EmbeddingBagShape& s, bool mean, bool sparse, bool by_freq, T* grad_weight,
                  int64_t* rows, int64_t* num_rows, Workspace& workspace, cudaStream_t stream) {
  const int64_t n = s.nnz;
  K* keys[2] = {static_cast<K*>(workspace.allocate(sizeof(K) * n)), static_cast<K*>(workspace.allocate(sizeof(K) * n))};
  V* values[2] = {static_cast<V*>(workspace.allocate(sizeof(V) * n)),
                  static_cast<V*>(workspace.allocate(sizeof(V) * n))};
  auto* bag_of = psw ? static_cast<V*>(workspace.allocate(sizeof(V) * n)) : nullptr;
  using Acc = typename AccOf<T>::type;
  auto* mean_weight = mean ? static_cast<Acc*>(workspace.allocate(sizeof(Acc) * s.bags)) : nullptr;
  prep_sum_kernel<I, K, V, Acc><<<grid_for(mean ? std::max(n, s.bags) : n, kThreads), kThreads, 0, stream>>>(
      indices, bounds, s, keys[0], values[0], bag_of, bag_size, mean_weight);
  GPUPRIM_LAUNCH_CHECK();
  // Stable sort on the key bits that hold [0, num_weights] (the sentinel num_weights is the largest key).
  const int sorted = radix_sort::sort_pairs(keys, values, n, bits_to_hold(uint64_t(s.num_weights)), workspace, stream);
  reduce_pairs<T, K, V>(keys[sorted], values[sorted], n, static_cast<K>(s.num_weights), grad, s.dim, bag_of, psw,
                        mean_weight, grad_weight, rows, sparse, by_freq, num_rows,
                        sparse ? 0 : s.num_weights,
                        workspace, stream);
  if (sparse) {  // the slots past the distinct rows are zero: only those written, not all of them first
    fill::zero_rows_past_count(grad_weight, s.dim * int64_t(sizeof(T)), num_rows, n, stream);
    fill::zero_rows_past_count(rows, int64_t(sizeof(int64_t)), num_rows, n, stream);
  }
}

template <typename T, typename K, typename V>
void backward_max(const T* grad, const int64_t* max_indices, const EmbeddingBagShape& s, T* grad_weight,
                  Workspace& workspace, cudaStream_t stream) {
  const int64_t n = s.bags * s.dim;
  K* keys[2] = {static_cast<K*>(workspace.allocate(sizeof(K) * n)), static_cast<K*>(workspace.allocate(sizeof(K) * n))};
  V* values[2] = {static_cast<V*>(workspace.allocate(sizeof(V) * n)),
                  static_cast<V*>(workspace.allocate(sizeof(V) * n))};
  prep_max_kernel<K, V><<<grid_for(n, kThreads), kThreads, 0, stream>>>(max_indices, s, keys[0], values[0]);
  GPUPRIM_LAUNCH_CHECK();
  const K sentinel = static_cast<K>(s.num_weights * s.dim);
  const int sorted = radix_sort::sort_pairs(keys, values, n, bits_to_hold(uint64_t(sentinel)), workspace, stream);
  // Items of width 1: element i = b * D + column of grad goes to element key of the table.
  reduce_pairs<T, K, V>(keys[sorted], values[sorted], n, sentinel, grad, /*width=*/1, nullptr, nullptr, nullptr,
                        grad_weight, nullptr, false, false, nullptr, 0, workspace, stream);
}

// d out[bag(p)] / d psw[p]: one warp per position (16-byte loads when rows allow), a dot product folded in a
// fixed shuffle tree.
template <typename T, typename I, int Vec>
__global__ void __launch_bounds__(kThreads) psw_grad_kernel(const T* __restrict__ grad, const T* __restrict__ weight,
                                                            const I* __restrict__ indices,
                                                            const int64_t* __restrict__ bounds, EmbeddingBagShape s,
                                                            T* __restrict__ grad_psw) {
  using Acc = typename AccOf<T>::type;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = int64_t(gridDim.x) * kWarpsPerBlock;
  for (int64_t p = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; p < s.nnz; p += warps) {
    const int64_t r = static_cast<int64_t>(indices[p]);
    const int64_t b = segment_of_row(bounds, s.bags, s.nnz, p);
    Acc dot = Acc(0);
    if (b >= 0 && used(r, s)) {
      for (int64_t c = int64_t(lane) * Vec; c < s.dim; c += int64_t(kWarp) * Vec) {
        const VecOf<Vec, T> g = load_vec<Vec>(grad + b * s.dim + c);
        const VecOf<Vec, T> w = load_vec<Vec>(weight + r * s.dim + c);
#pragma unroll
        for (int j = 0; j < Vec; ++j) dot += convert<Acc>(g.items[j]) * convert<Acc>(w.items[j]);
      }
    }
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) dot += __shfl_down_sync(0xffffffffu, dot, offset);
    if (lane == 0) grad_psw[p] = convert<T>(dot);
  }
}

}  // namespace

void embedding_bag_cuda_launch(const void* weight, DType type, const void* indices, DType index_type,
                               const int64_t* bounds, const void* per_sample_weights, EmbeddingBagShape shape,
                               EmbeddingBagMode mode, const EmbeddingBagChecks& checks, void* out, int64_t* bag_size,
                               int64_t* max_indices, Workspace& workspace, cudaStream_t stream) {
  if (shape.bags == 0) return;
  const auto windows = static_cast<size_t>((shape.nnz + kEmbeddingBagLongBag - 1) / kEmbeddingBagLongBag);
  auto* flag = static_cast<uint64_t*>(workspace.allocate(sizeof(uint64_t) + sizeof(unsigned) * windows));
  const LongBags long_bags{flag, embedding_bag_long_bag_token(), reinterpret_cast<unsigned*>(flag + 1)};
  auto run = [&](auto tag, auto index_tag) {
    using T = decltype(tag);
    using I = decltype(index_tag);
    forward<T, I>(static_cast<const T*>(weight), static_cast<const I*>(indices), bounds,
                  static_cast<const T*>(per_sample_weights), shape, mode, checks, long_bags, static_cast<T*>(out),
                  bag_size, max_indices, stream);
  };
  dispatch<FloatingTypes>("embedding_bag", type, [&](auto tag) {
    dispatch<IndexTypes>("embedding_bag", index_type, [&](auto index_tag) {
      run(typename decltype(tag)::type(), typename decltype(index_tag)::type());
    });
  });
  embedding_bag_long_bags_cuda_launch(weight, type, indices, index_type, bounds, per_sample_weights, shape, mode,
                                      checks.indices, long_bags, out, bag_size, max_indices, workspace, stream);
}

void embedding_bag_backward_cuda_launch(const void* grad, const void* weight, DType type, const void* indices,
                                        DType index_type, const int64_t* bounds, const int64_t* bag_size,
                                        const int64_t* max_indices, const void* per_sample_weights,
                                        EmbeddingBagShape shape, EmbeddingBagMode mode, bool sparse,
                                        bool scale_grad_by_freq, void* grad_weight, int64_t* rows, int64_t* num_rows,
                                        void* grad_per_sample_weights, Workspace& workspace, cudaStream_t stream) {
  if (shape.bags == 0 || shape.dim == 0 || shape.nnz == 0 || shape.num_weights == 0) return;
  auto run = [&](auto tag, auto index_tag) {
    using T = decltype(tag);
    using I = decltype(index_tag);
    const T* g = static_cast<const T*>(grad);
    T* gw = static_cast<T*>(grad_weight);
    const T* psw = static_cast<const T*>(per_sample_weights);
    if (mode == EmbeddingBagMode::kMax) {
      const int64_t n = shape.bags * shape.dim;
      // 32-bit keys and positions when they fit (faster sort, half the memory).
      if (n < (int64_t(1) << 31) && shape.num_weights * shape.dim < (int64_t(1) << 32) - 1) {
        backward_max<T, uint32_t, int32_t>(g, max_indices, shape, gw, workspace, stream);
      } else {
        backward_max<T, uint64_t, int64_t>(g, max_indices, shape, gw, workspace, stream);
      }
    } else {
      const bool mean = mode == EmbeddingBagMode::kMean;
      if (shape.nnz < (int64_t(1) << 31) && shape.bags < (int64_t(1) << 31) &&
          shape.num_weights < (int64_t(1) << 32) - 1) {
        backward_sum<T, I, uint32_t, int32_t>(g, static_cast<const I*>(indices), bounds, bag_size, psw, shape, mean,
                                              sparse, scale_grad_by_freq, gw, rows, num_rows, workspace, stream);
      } else {
        backward_sum<T, I, uint64_t, int64_t>(g, static_cast<const I*>(indices), bounds, bag_size, psw, shape, mean,
                                              sparse, scale_grad_by_freq, gw, rows, num_rows, workspace, stream);
      }
    }
    if (grad_per_sample_weights != nullptr) {
      constexpr int kVec = 16 / sizeof(T);
      auto launch = [&](auto kernel) {
        kernel<<<grid_for(shape.nnz, kWarpsPerBlock, 8 * resident_blocks(kernel, kThreads)), kThreads, 0, stream>>>(
            g, static_cast<const T*>(weight), static_cast<const I*>(indices), bounds, shape,
            static_cast<T*>(grad_per_sample_weights));
      };
      if (shape.dim % kVec == 0 && aligned(g, 16) && aligned(weight, 16)) {
        launch(psw_grad_kernel<T, I, kVec>);
      } else {
        launch(psw_grad_kernel<T, I, 1>);
      }
      GPUPRIM_LAUNCH_CHECK();
    }
  };
  dispatch<FloatingTypes>("embedding_bag_backward", type, [&](auto tag) {
    dispatch<IndexTypes>("embedding_bag_backward", index_type, [&](auto index_tag) {
      run(typename decltype(tag)::type(), typename decltype(index_tag)::type());
    });
  });
}

}  // namespace gpuprim
