// Kernels and launchers of gpuprim::embedding_bag (forward) and its deterministic backward.
//
// Forward: one warp per bag (a group of 4-16 lanes for short rows); each lane holds Vec adjacent columns
// (16-byte loads when the row allows), walks the bag's indices in order (kUnroll rows in flight) and
// accumulates in fp32 (fp64 for double). max keeps the first maximum's row.
//
// Backward (weight): every contribution is a (key, position) pair:
//   sum/mean  key = weight row of indices[p], value = bag of p (with per_sample_weights: p, and its bag
//             from bag_of); its source row is grad[bag] (times per_sample_weights[p], or over the bag's size
//             for mean);
//   max       key = row * D + column of max_indices[b, column], position b * D + column; its source is that
//             one element of grad (rows of width 1).
// Unused pairs (padding_idx, out-of-range index, position in no bag) get the sentinel key (num_keys), which
// sorts last and is skipped.
//   1. prep kernel        keys and values (and bag_of for sum with per_sample_weights)
//   2. radix sort         stable CUB sort of the pairs by the key bits [0, bits(num_keys))
//   3. run starts         CUB select of the positions where the key changes (run starts and their count, on device)
//   4. runs, plan         per run: its key (dense sum/mean: and each table row's run); chunks of chunk_size(n)
//                         pairs and partial rows (runs of several chunks), computed inside CUB's scan of them
//   5. chunk kernel       one warp (fewer lanes for short rows) per chunk folds its pairs in sorted
//                         (= position) order in fp32; a run of one chunk is stored directly (pass 1: one item
//                         per run), a longer (hot) run stores one partial row per chunk (pass 2). Dense sum/mean:
//                         the dense rows kernel instead writes every table row once (zeros for rows without
//                         pairs) and then runs pass 2 in the same launch
//   6. combine kernel     one block per hot run folds its partial rows: warp g takes rows g, g + 32, ...,
//                         then the 32 warp sums are added in warp order
// Every order depends only on the data and the shapes, never on timing: bitwise identical on every run. No
// float atomics, no host sync.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/launch.h"
#include "ops/embedding/embedding_bag/embedding_bag_launch.h"
#include "prim/util/cub.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/util/convert.cuh"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace thrust = THRUST_NS_QUALIFIER;  // wrapped in gpuprim_thrust, like CUB (prim/cub.cuh)
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / kWarp;
constexpr int kCombineThreads = 1024;  // one block per hot run: 32 warps share its partial rows
constexpr int kCombineWarps = kCombineThreads / kWarp;
constexpr int kUnroll = 4;  // independent row loads in flight per lane

__host__ __device__ __forceinline__ bool used(int64_t index, const EmbeddingBagShape& s) {
  return index >= 0 && index < s.num_weights && index != s.padding_idx;
}

int bits_for(uint64_t v) {  // bits needed to hold v (>= 1)
  int bits = 1;
  while (bits < 64 && (v >> bits) != 0) ++bits;
  return bits;
}

// ---------------------------------------------------------------- forward
// Max: a template flag, so sum/mean do not carry max's int64 argmax registers (higher occupancy).
template <typename T, typename I, int Vec, bool Max>
__global__ void __launch_bounds__(kThreads) forward_kernel(const T* __restrict__ weight, const I* __restrict__ indices,
                                                           const int64_t* __restrict__ bounds,
                                                           const T* __restrict__ psw, EmbeddingBagShape s,
                                                           EmbeddingBagMode mode, int group, T* __restrict__ out,
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
    // Used indices of the bag (for mean and bag_size), counted by the bag's lanes (a group-uniform loop).
    int64_t count = 0;
    for (int64_t p0 = lo; p0 < hi; p0 += group) {
      const int64_t p = p0 + lane;
      const bool ok = p < hi && used(static_cast<int64_t>(indices[p]), s);
      count += __popc(__ballot_sync(mask, ok) & mask);
    }
    if (lane == 0) bag_size[b] = count;
    for (int64_t col = int64_t(lane) * Vec; col < s.dim; col += int64_t(group) * Vec) {
      Acc acc[Vec];
      int64_t arg[Max ? Vec : 1];
#pragma unroll
      for (int j = 0; j < Vec; ++j) acc[j] = Acc(0);
#pragma unroll
      for (int j = 0; j < (Max ? Vec : 1); ++j) arg[j] = -1;
      int64_t p = lo;
      for (; p < hi; p += kUnroll) {
        // kUnroll rows in flight, then folded in bag order.
        VecOf<Vec, T> rows[kUnroll];
        int64_t r[kUnroll];
        bool ok[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          r[u] = p + u < hi ? static_cast<int64_t>(indices[p + u]) : -1;
          ok[u] = used(r[u], s);
          if (ok[u]) rows[u] = load_vec<Vec>(weight + r[u] * s.dim + col);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (!ok[u]) continue;
          if constexpr (Max) {
#pragma unroll
            for (int j = 0; j < Vec; ++j) {
              const Acc v = convert<Acc>(rows[u].items[j]);
              if (arg[j] < 0 || v > acc[j]) {  // the first maximum wins (as torch)
                acc[j] = v;
                arg[j] = r[u];
              }
            }
          } else {
            const Acc scale = psw ? convert<Acc>(psw[p + u]) : Acc(1);
#pragma unroll
            for (int j = 0; j < Vec; ++j) acc[j] += scale * convert<Acc>(rows[u].items[j]);
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

// Lanes per bag: the fewest (>= 4) whose loads cover a row, up to a warp.
int lanes_per_bag(int64_t dim, int vec) {
  int group = kWarp;
  while (group > 4 && int64_t(group / 2) * vec >= dim) group /= 2;
  return group;
}

template <typename T, typename I>
void forward(const T* weight, const I* indices, const int64_t* bounds, const T* psw, const EmbeddingBagShape& s,
             EmbeddingBagMode mode, T* out, int64_t* bag_size, int64_t* max_indices, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(T);
  const bool wide = s.dim % kVec == 0 && aligned(weight, 16) && aligned(out, 16);
  auto launch = [&](auto kernel, int vec) {
    const int group = lanes_per_bag(s.dim, vec);
    kernel<<<grid_for(s.bags, kThreads / group, 8 * resident_blocks(kernel, kThreads)), kThreads, 0, stream>>>(
        weight, indices, bounds, psw, s, mode, group, out, bag_size, max_indices);
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
// reduction; the stable sort still orders a row's pairs by position, hence by bag).
template <typename I, typename K, typename V>
__global__ void __launch_bounds__(kThreads) prep_sum_kernel(const I* __restrict__ indices,
                                                            const int64_t* __restrict__ bounds, EmbeddingBagShape s,
                                                            K* __restrict__ keys, V* __restrict__ values,
                                                            V* __restrict__ bag_of) {
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < s.nnz; p += int64_t(gridDim.x) * blockDim.x) {
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

// ---------------------------------------------------------------- backward: runs
// A run starts at sorted position i when the key changes there (CUB's DeviceSelect::If over the positions
// writes the run starts and their count in one pass, as in run_length_encode).
template <typename K>
struct IsRunHead {
  const K* keys;
  __device__ __forceinline__ bool operator()(int64_t i) const { return i == 0 || keys[i] != keys[i - 1]; }
};

template <typename V>
struct RunPlan {
  V chunks;    // chunks of the run (0 for the sentinel run and past num_runs)
  V partials;  // partial rows it writes: its chunks when there are several, else 0
  V hot;       // 1 when it has several chunks
};
struct RunPlanPlus {
  template <typename P>
  __host__ __device__ P operator()(const P& a, const P& b) const {
    return {a.chunks + b.chunks, a.partials + b.partials, a.hot + b.hot};
  }
};

// The plan entry of run r (zero for the sentinel run and past num_runs), computed while CUB scans it: the last
// run ends at n, so start[num_runs] need not be written yet.
template <typename K, typename V>
struct PlanOfRun {
  const K* keys;
  const V* start;  // run starts (select output)
  const V* num_runs;
  int64_t n;
  K sentinel;
  int64_t chunk;
  __host__ __device__ RunPlan<V> operator()(V run) const {
    const int64_t r = static_cast<int64_t>(run), runs = static_cast<int64_t>(*num_runs);
    if (r >= runs) return {V(0), V(0), V(0)};
    const int64_t begin = static_cast<int64_t>(start[r]);
    const int64_t end = r + 1 < runs ? static_cast<int64_t>(start[r + 1]) : n;
    if (keys[begin] == sentinel) return {V(0), V(0), V(0)};
    const V chunks = static_cast<V>((end - begin + chunk - 1) / chunk);
    return {chunks, chunks > 1 ? chunks : V(0), chunks > 1 ? V(1) : V(0)};
  }
};

// Per run r < num_runs (start[r] from the select): its key unique[r], and row_run[key] = r (dense sum/mean, when
// not null; -1 elsewhere, set before the launch). Thread 0 also writes start[num_runs] = n (no thread here reads
// it) and num_rows (when not null): the runs but the sentinel's, which is the last run when present.
template <typename K, typename V>
__global__ void __launch_bounds__(kThreads) runs_kernel(const K* __restrict__ keys, V* __restrict__ start,
                                                        const V* __restrict__ num_runs, int64_t n, K sentinel,
                                                        K* __restrict__ unique, V* __restrict__ row_run,
                                                        int64_t* __restrict__ num_rows) {
  const int64_t runs = *num_runs;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    start[runs] = static_cast<V>(n);
    if (num_rows != nullptr) *num_rows = runs > 0 && keys[n - 1] == sentinel ? runs - 1 : runs;
  }
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < runs; r += int64_t(gridDim.x) * blockDim.x) {
    const K key = keys[start[r]];
    unique[r] = key;
    if (row_run != nullptr && key != sentinel) row_run[key] = static_cast<V>(r);
  }
}

// The first run r in [0, runs) whose scanned field exceeds `target` (fields are non-decreasing).
template <typename V, typename Field>
__device__ __forceinline__ int64_t find_run(const RunPlan<V>* plan, int64_t runs, int64_t target, Field field) {
  int64_t first = 0, last = runs;
  while (first < last) {
    const int64_t mid = first + (last - first) / 2;
    if (int64_t(field(plan[mid])) > target) last = mid; else first = mid + 1;
  }
  return first;
}

// Everything the chunk and combine kernels read about the pairs and where results go.
template <typename T, typename K, typename V>
struct ReduceArgs {
  const T* src;             // grad: rows of `width` elements
  int64_t width;            // D for sum/mean, 1 for max
  const V* positions;       // sorted values of the pairs
  const V* bag_of;          // position -> source row (sum with psw); nullptr: the value is the source row
  const T* psw;             // scale by per_sample_weights[position] (sum), or nullptr
  const int64_t* bag_size;  // divide by the bag's size (mean), or nullptr
  const K* unique;          // key of each run
  const V* start;           // [runs + 1]
  const V* num_runs;
  const RunPlan<V>* plan;   // inclusive scan
  int64_t chunk;
  T* out;                   // dense: out + key * width; sparse: out + run * width and rows[run] = key
  int64_t* rows;            // sparse only
  bool sparse;
  const V* row_run;         // dense sum/mean: run of each row of out (-1: none), else nullptr
};

// acc = the pairs [begin, end) (sorted = position order) at columns [col, col + Vec), folded in that order
// with kUnroll rows in flight; times per_sample_weights, or (mean) times 1 / the bag's size, as the CPU kernel:
// one division per pair instead of one per element (an IEEE fp32 division is a ~20-instruction sequence).
template <typename T, typename K, typename V, int Vec>
__device__ __forceinline__ void fold_pairs(const ReduceArgs<T, K, V>& a, int64_t begin, int64_t end, int64_t col,
                                           typename AccOf<T>::type (&acc)[Vec]) {
  using Acc = typename AccOf<T>::type;
#pragma unroll
  for (int j = 0; j < Vec; ++j) acc[j] = Acc(0);
  for (int64_t i = begin; i < end; i += kUnroll) {
    VecOf<Vec, T> rows[kUnroll];
    Acc scale[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i + u >= end) continue;
      const int64_t p = static_cast<int64_t>(a.positions[i + u]);
      const int64_t row = a.bag_of ? static_cast<int64_t>(a.bag_of[p]) : p;
      rows[u] = load_vec<Vec>(a.src + row * a.width + col);
      if (a.psw) {
        scale[u] = convert<Acc>(a.psw[p]);
      } else if (a.bag_size) {
        const int64_t size = a.bag_size[row];
        scale[u] = Acc(1) / static_cast<Acc>(size > 1 ? size : int64_t(1));
      } else {
        scale[u] = Acc(1);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i + u >= end) break;
#pragma unroll
      for (int j = 0; j < Vec; ++j) acc[j] += convert<Acc>(rows[u].items[j]) * scale[u];
    }
  }
}

// Work item w of a chunk pass. `hot` false: one item per run, the runs of a single chunk (most runs; no search);
// `hot` true: one item per chunk of the hot runs (found by a binary search in the scanned partial rows), each
// storing its partial row. `group` lanes per item (1 to 32, a power of two): no lane communication.
template <typename T, typename K, typename V, int Vec>
__device__ __forceinline__ void chunk_item(const ReduceArgs<T, K, V>& a, int64_t runs, int64_t w, bool hot, int lane,
                                           int group, typename AccOf<T>::type* __restrict__ partials) {
  using Acc = typename AccOf<T>::type;
  int64_t r, k;
  RunPlan<V> before{V(0), V(0), V(0)};
  if (hot) {
    r = find_run(a.plan, runs, w, [](const RunPlan<V>& p) { return p.partials; });
    if (r > 0) before = a.plan[r - 1];
    k = w - int64_t(before.partials);  // the partial row is w itself
  } else {
    r = w;
    if (r > 0) before = a.plan[r - 1];
    if (int64_t(a.plan[r].chunks) - int64_t(before.chunks) != 1) return;  // empty (sentinel) or hot run
    k = 0;
  }
  const int64_t begin = int64_t(a.start[r]) + k * a.chunk;
  const int64_t stop = int64_t(a.start[r + 1]);
  const int64_t end = stop < begin + a.chunk ? stop : begin + a.chunk;
  const int64_t key = static_cast<int64_t>(a.unique[r]);
  for (int64_t col = int64_t(lane) * Vec; col < a.width; col += int64_t(group) * Vec) {
    Acc acc[Vec];
    fold_pairs<T, K, V, Vec>(a, begin, end, col, acc);
    if (!hot) {
      VecOf<Vec, T> result;
#pragma unroll
      for (int j = 0; j < Vec; ++j) result.items[j] = convert<T>(acc[j]);
      store_vec<Vec>(a.out + (a.sparse ? r : key) * a.width + col, result);
    } else {
      Acc* dst = partials + w * a.width + col;
#pragma unroll
      for (int j = 0; j < Vec; ++j) dst[j] = acc[j];
    }
  }
  if (a.sparse && lane == 0 && !hot) a.rows[r] = key;  // hot runs: combine_kernel
}

// Two passes over chunk_item: Hot false (runs of one chunk), then Hot true (the chunks of hot runs).
template <typename T, typename K, typename V, int Vec, bool Hot>
__global__ void __launch_bounds__(kThreads)
    chunk_kernel(ReduceArgs<T, K, V> a, int group, typename AccOf<T>::type* __restrict__ partials) {
  constexpr bool hot = Hot;
  const int lane = threadIdx.x % group;
  const int per_block = kThreads / group;
  const int64_t runs = *a.num_runs;
  if (runs == 0) return;
  const int64_t total = hot ? int64_t(a.plan[runs - 1].partials) : runs;
  for (int64_t w = int64_t(blockIdx.x) * per_block + threadIdx.x / group; w < total;
       w += int64_t(gridDim.x) * per_block) {
    chunk_item<T, K, V, Vec>(a, runs, w, hot, lane, group, partials);
  }
}

// Dense sum/mean: writes every row of out exactly once in one pass over the table (zeros where a row got no
// pair, the folded pairs of a single-chunk run elsewhere; hot runs are left to combine_kernel), instead of a
// zero fill of the whole table followed by a scatter of the touched rows. Each block iteration takes a tile of
// kThreads rows: thread t looks up row k0 + t's pair range (its two dependent loads done for all the tile's rows
// at once), then groups of `group` lanes write the tile's rows, with evict-first stores so that the table's
// gigabytes streaming through L2 do not evict the grad rows gathered (H200 probe, 2026-12-01, a backward with
// L2 flushed: 10M x 64 fp32 1032 -> 935 us, 1M x 128 450 -> 417 us). Afterwards the blocks share the hot runs'
// chunks (chunk_kernel's second pass, here: one launch less, and it overlaps the row writes).
template <typename T, typename K, typename V, int Vec>
__global__ void __launch_bounds__(kThreads)
    dense_rows_kernel(ReduceArgs<T, K, V> a, int64_t out_rows, int group,
                      typename AccOf<T>::type* __restrict__ partials) {
  using Acc = typename AccOf<T>::type;
  __shared__ V tile_begin[kThreads];
  __shared__ V tile_end[kThreads];
  const int lane = threadIdx.x % group;
  const int per_block = kThreads / group;
  for (int64_t k0 = int64_t(blockIdx.x) * kThreads; k0 < out_rows; k0 += int64_t(gridDim.x) * kThreads) {
    // block-uniform loop (barriers inside)
    const int64_t k = k0 + threadIdx.x;
    V begin = V(0), end = V(0);  // an empty range: a zero row
    if (k < out_rows) {
      const int64_t r = static_cast<int64_t>(a.row_run[k]);
      if (r >= 0) {
        begin = a.start[r];
        end = a.start[r + 1];
      }
    }
    tile_begin[threadIdx.x] = begin;
    tile_end[threadIdx.x] = end;
    __syncthreads();
    const int64_t tile_rows = out_rows - k0 < kThreads ? out_rows - k0 : int64_t(kThreads);
    for (int64_t t = threadIdx.x / group; t < tile_rows; t += per_block) {  // group-uniform
      const int64_t b = static_cast<int64_t>(tile_begin[t]), e = static_cast<int64_t>(tile_end[t]);
      if (e - b > a.chunk) continue;  // hot run (several chunks): combine_kernel writes the row
      T* dst = a.out + (k0 + t) * a.width;
      for (int64_t col = int64_t(lane) * Vec; col < a.width; col += int64_t(group) * Vec) {
        Acc acc[Vec];
        fold_pairs<T, K, V, Vec>(a, b, e, col, acc);
        VecOf<Vec, T> result;
#pragma unroll
        for (int j = 0; j < Vec; ++j) result.items[j] = convert<T>(acc[j]);
        store_vec_streaming<Vec>(dst + col, result);
      }
    }
    __syncthreads();  // the tile's ranges are read before the next tile overwrites them
  }
  const int64_t runs = *a.num_runs;
  const int64_t hot_items = runs > 0 ? int64_t(a.plan[runs - 1].partials) : 0;
  for (int64_t w = int64_t(blockIdx.x) * per_block + threadIdx.x / group; w < hot_items;
       w += int64_t(gridDim.x) * per_block) {
    chunk_item<T, K, V, Vec>(a, runs, w, true, lane, group, partials);
  }
}

template <typename T, typename K, typename V, int Vec>
__global__ void __launch_bounds__(kCombineThreads)
    combine_kernel(ReduceArgs<T, K, V> a, const typename AccOf<T>::type* __restrict__ partials) {
  using Acc = typename AccOf<T>::type;
  __shared__ Acc shared[kCombineWarps][kWarp * Vec];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t runs = *a.num_runs;
  if (runs == 0) return;  // block-uniform
  const int64_t total = a.plan[runs - 1].hot;
  for (int64_t h = blockIdx.x; h < total; h += gridDim.x) {  // block-uniform
    const int64_t r = find_run(a.plan, runs, h, [](const RunPlan<V>& p) { return p.hot; });
    const RunPlan<V> before = r > 0 ? a.plan[r - 1] : RunPlan<V>{V(0), V(0), V(0)};
    const int64_t chunks = int64_t(a.plan[r].chunks) - int64_t(before.chunks);
    const Acc* base = partials + int64_t(before.partials) * a.width;
    const int64_t key = static_cast<int64_t>(a.unique[r]);
    for (int64_t tile = 0; tile < a.width; tile += int64_t(kWarp) * Vec) {
      const int64_t col = tile + int64_t(lane) * Vec;
      Acc acc[Vec];
#pragma unroll
      for (int j = 0; j < Vec; ++j) acc[j] = Acc(0);
      if (col < a.width) {
        // Rows warp, warp + 8, ... in that order, kUnroll loads in flight.
        for (int64_t k = warp; k < chunks; k += int64_t(kCombineWarps) * kUnroll) {
          Acc v[kUnroll][Vec];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int64_t row = k + int64_t(u) * kCombineWarps;
#pragma unroll
            for (int j = 0; j < Vec; ++j) v[u][j] = row < chunks ? base[row * a.width + col + j] : Acc(0);
          }
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            if (k + int64_t(u) * kCombineWarps >= chunks) break;
#pragma unroll
            for (int j = 0; j < Vec; ++j) acc[j] += v[u][j];
          }
        }
      }
#pragma unroll
      for (int j = 0; j < Vec; ++j) shared[warp][lane * Vec + j] = acc[j];
      __syncthreads();
      if (warp == 0 && col < a.width) {
        VecOf<Vec, T> result;
#pragma unroll
        for (int j = 0; j < Vec; ++j) {
          Acc sum = shared[0][lane * Vec + j];
          for (int w = 1; w < kCombineWarps; ++w) sum += shared[w][lane * Vec + j];
          result.items[j] = convert<T>(sum);
        }
        store_vec<Vec>(a.out + (a.sparse ? r : key) * a.width + col, result);
      }
      __syncthreads();
    }
    if (a.sparse && threadIdx.x == 0) a.rows[r] = key;
  }
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

// Steps 3-6 on sorted pairs: runs, plan, chunk and combine kernels. dense_rows > 0 (dense sum/mean): out has
// that many rows, each written exactly once here (out need not be zeroed): the single-chunk runs and the rows
// without pairs by dense_rows_kernel, the hot runs by combine_kernel. Otherwise out must be zero on entry.
template <typename T, typename K, typename V>
void reduce_sorted(const K* keys, int64_t n, K sentinel, ReduceArgs<T, K, V> a, int64_t* num_rows,
                   int64_t dense_rows, Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  auto* unique = static_cast<K*>(workspace.allocate(sizeof(K) * n));
  auto* start = static_cast<V*>(workspace.allocate(sizeof(V) * (n + 1)));
  auto* num_runs = static_cast<V*>(workspace.allocate(sizeof(V)));
  auto* plan = static_cast<RunPlan<V>*>(workspace.allocate(sizeof(RunPlan<V>) * n));
  // CUB sizes of V's width: 32-bit offsets inside CUB (faster kernels) whenever the pairs fit them.
  const V items = static_cast<V>(n);
  const thrust::counting_iterator<V> positions(0);
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(
      cub::DeviceSelect::If(nullptr, temp_bytes, positions, start, num_runs, items, IsRunHead<K>{keys}, stream));
  void* temp = workspace.allocate(std::max<size_t>(temp_bytes, 1));
  GPUPRIM_CUDA_CHECK(
      cub::DeviceSelect::If(temp, temp_bytes, positions, start, num_runs, items, IsRunHead<K>{keys}, stream));
  V* row_run = nullptr;
  if (dense_rows > 0) {
    // 4 (or 8) bytes per table row, against the D * sizeof(T) bytes per row that a separate zero fill wrote.
    row_run = static_cast<V*>(workspace.allocate(sizeof(V) * dense_rows));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(row_run, 0xff, sizeof(V) * dense_rows, stream));  // every byte 0xff: -1
  }
  runs_kernel<K, V><<<grid_for(n, kThreads), kThreads, 0, stream>>>(keys, start, num_runs, n, sentinel, unique,
                                                                    row_run, num_rows);
  GPUPRIM_LAUNCH_CHECK();
  const auto run_plans =
      thrust::make_transform_iterator(thrust::counting_iterator<V>(0), PlanOfRun<K, V>{keys, start, num_runs, n,
                                                                                       sentinel, a.chunk});
  temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(
      cub::DeviceScan::InclusiveScan(nullptr, temp_bytes, run_plans, plan, RunPlanPlus(), items, stream));
  temp = workspace.allocate(std::max<size_t>(temp_bytes, 1));
  GPUPRIM_CUDA_CHECK(cub::DeviceScan::InclusiveScan(temp, temp_bytes, run_plans, plan, RunPlanPlus(), items, stream));
  a.row_run = row_run;
  a.unique = unique;
  a.start = start;
  a.num_runs = num_runs;
  a.plan = plan;
  // Hot runs have more than `chunk` pairs: at most n / chunk of them, with at most 2 n / chunk partial rows.
  const int64_t partial_rows = 2 * (n / a.chunk) + 1;
  auto* partials = static_cast<Acc*>(workspace.allocate(sizeof(Acc) * partial_rows * a.width));
  auto run = [&](auto vec_tag) {
    constexpr int kVec = decltype(vec_tag)::value;
    auto chunk = chunk_kernel<T, K, V, kVec, false>;
    // Grid-stride loops over the real totals (read on the device); n bounds the busy part of the grid.
    int group = kWarp;  // the fewest lanes whose loads cover a row (1 for max's single elements)
    while (group > 1 && int64_t(group / 2) * kVec >= a.width) group /= 2;
    const int64_t grid_cap = 4 * resident_blocks(chunk, kThreads);
    if (dense_rows > 0) {
      // A block per tile of kThreads rows (no cap: a tile is enough work, and the hardware balances the tail),
      // and at least the blocks chunk_kernel's hot pass would have (a small table can have many hot chunks).
      const unsigned tiles = grid_for(dense_rows, kThreads);
      const unsigned grid = std::max(tiles, grid_for(partial_rows, kThreads / group, grid_cap));
      dense_rows_kernel<T, K, V, kVec><<<grid, kThreads, 0, stream>>>(a, dense_rows, group, partials);
      GPUPRIM_LAUNCH_CHECK();
    } else {
      chunk<<<grid_for(n, kThreads / group, grid_cap), kThreads, 0, stream>>>(a, group, partials);
      GPUPRIM_LAUNCH_CHECK();
      chunk_kernel<T, K, V, kVec, true>
          <<<grid_for(partial_rows, kThreads / group, grid_cap), kThreads, 0, stream>>>(a, group, partials);
      GPUPRIM_LAUNCH_CHECK();
    }
    auto combine = combine_kernel<T, K, V, kVec>;
    combine<<<grid_for(n / a.chunk + 1, 1, 2 * resident_blocks(combine, kCombineThreads)), kCombineThreads, 0,
              stream>>>(a, partials);
    GPUPRIM_LAUNCH_CHECK();
  };
  constexpr int kVec = 16 / sizeof(T);
  if (a.width % kVec == 0 && aligned(a.src, 16) && aligned(a.out, 16)) {
    run(std::integral_constant<int, kVec>());
  } else {
    run(std::integral_constant<int, 1>());
  }
}

// Pairs per chunk: at least 32, and few enough chunks (<= ~16384, i.e. <= 512 partial rows per combine warp)
// that one hot run's partials fold quickly, while the longest single-chunk run stays short (n / 16384 pairs).
int64_t chunk_size(int64_t n) { return std::max<int64_t>(32, (n + 16383) / 16384); }

template <typename T, typename I, typename K, typename V>
void backward_sum(const T* grad, const T* weight, const I* indices, const int64_t* bounds, const int64_t* bag_size,
                  const T* psw, const EmbeddingBagShape& s, bool mean, bool sparse, T* grad_weight, int64_t* rows,
                  int64_t* num_rows, Workspace& workspace, cudaStream_t stream) {
  const int64_t n = s.nnz;
  K* keys[2] = {static_cast<K*>(workspace.allocate(sizeof(K) * n)), static_cast<K*>(workspace.allocate(sizeof(K) * n))};
  V* values[2] = {static_cast<V*>(workspace.allocate(sizeof(V) * n)),
                  static_cast<V*>(workspace.allocate(sizeof(V) * n))};
  auto* bag_of = psw ? static_cast<V*>(workspace.allocate(sizeof(V) * n)) : nullptr;
  prep_sum_kernel<I, K, V><<<grid_for(n, kThreads), kThreads, 0, stream>>>(indices, bounds, s, keys[0], values[0],
                                                                           bag_of);
  GPUPRIM_LAUNCH_CHECK();
  const int end_bit = bits_for(uint64_t(s.num_weights));  // the sentinel num_weights is the largest key
  const int sorted = radix_sort::sort_pairs(keys, values, n, end_bit, workspace, stream);
  ReduceArgs<T, K, V> a{};
  a.src = grad;
  a.width = s.dim;
  a.positions = values[sorted];
  a.bag_of = bag_of;
  a.psw = psw;
  a.bag_size = mean ? bag_size : nullptr;
  a.chunk = chunk_size(n);
  a.out = grad_weight;
  a.rows = rows;
  a.sparse = sparse;
  reduce_sorted<T, K, V>(keys[sorted], n, static_cast<K>(s.num_weights), a, num_rows, sparse ? 0 : s.num_weights,
                         workspace, stream);
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
  const int sorted = radix_sort::sort_pairs(keys, values, n, bits_for(uint64_t(sentinel)), workspace, stream);
  ReduceArgs<T, K, V> a{};
  a.src = grad;
  a.width = 1;
  a.positions = values[sorted];
  a.chunk = chunk_size(n);
  a.out = grad_weight;
  reduce_sorted<T, K, V>(keys[sorted], n, sentinel, a, nullptr, 0, workspace, stream);
}

}  // namespace

void embedding_bag_cuda_launch(const void* weight, DType type, const void* indices, DType index_type,
                               const int64_t* bounds, const void* per_sample_weights, EmbeddingBagShape shape,
                               EmbeddingBagMode mode, void* out, int64_t* bag_size, int64_t* max_indices,
                               Workspace& workspace, cudaStream_t stream) {
  if (shape.bags == 0) return;
  auto run = [&](auto tag, auto index_tag) {
    using T = decltype(tag);
    using I = decltype(index_tag);
    forward<T, I>(static_cast<const T*>(weight), static_cast<const I*>(indices), bounds,
                  static_cast<const T*>(per_sample_weights), shape, mode, static_cast<T*>(out), bag_size,
                  max_indices, stream);
  };
  auto by_index = [&](auto tag) {
    if (index_type == DType::kInt32) return run(tag, int32_t());
    return run(tag, int64_t());
  };
  switch (type) {
    case DType::kFloat16: return by_index(__half());
    case DType::kBFloat16: return by_index(__nv_bfloat16());
    case DType::kFloat32: return by_index(float());
    case DType::kFloat64: return by_index(double());
    default: unsupported_dtype("embedding_bag", type);
  }
}

void embedding_bag_backward_cuda_launch(const void* grad, const void* weight, DType type, const void* indices,
                                        DType index_type, const int64_t* bounds, const int64_t* bag_size,
                                        const int64_t* max_indices, const void* per_sample_weights,
                                        EmbeddingBagShape shape, EmbeddingBagMode mode, bool sparse,
                                        void* grad_weight, int64_t* rows, int64_t* num_rows,
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
        backward_sum<T, I, uint32_t, int32_t>(g, static_cast<const T*>(weight), static_cast<const I*>(indices),
                                              bounds, bag_size, psw, shape, mean, sparse, gw, rows, num_rows,
                                              workspace, stream);
      } else {
        backward_sum<T, I, uint64_t, int64_t>(g, static_cast<const T*>(weight), static_cast<const I*>(indices),
                                              bounds, bag_size, psw, shape, mean, sparse, gw, rows, num_rows,
                                              workspace, stream);
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
  auto by_index = [&](auto tag) {
    if (index_type == DType::kInt32) return run(tag, int32_t());
    return run(tag, int64_t());
  };
  switch (type) {
    case DType::kFloat16: return by_index(__half());
    case DType::kBFloat16: return by_index(__nv_bfloat16());
    case DType::kFloat32: return by_index(float());
    case DType::kFloat64: return by_index(double());
    default: unsupported_dtype("embedding_bag_backward", type);
  }
}

}  // namespace gpuprim
