// The sorted-key front end of the segmented reduction: n items whose keys a stable radix sort has put in
// order (equal keys keep item order; the sentinel key, the largest, marks items to skip) are reduced run by
// run, a run being the items of one key:
//   1. run heads     CUB select of the positions where the key changes (starts and their count, on device)
//   2. runs          per run its key (and, in dense mode, the run of every output row)
//   3. plan          chunks of `chunk` items per run (plan.cuh), scanned by CUB while it computes them
//   4. chunk passes  a group of lanes per run folds its items in item order and hands the result to the Sink;
//                    a hot run (several chunks) stores a partial row per chunk. Dense mode instead visits every
//                    output row once (a row without items gets the reducer's identity) and then the hot chunks
//   5. combine       one block per hot run folds its partial rows: warp g takes rows g, g + 32, ..., then the
//                    warps' values meet in warp order, and the Sink stores the result
// Every order depends only on the keys and the shapes: bitwise identical on every run. No float atomics, no
// host sync. Items are gathered through a Source and results stored through a Sink (device functors):
//   Source: static constexpr bool kWeighted;
//           template <int Vec> FoldItem<Vec, In, Acc> load(int64_t o, int64_t i, int64_t col) const
//             (sorted item i of outer slice o: Vec elements of its row at column col, and its weight)
//   Sink:   static constexpr int kElementBytes;  (bytes of one stored element: dense mode's strips)
//           template <int Vec> void store(int64_t o, int64_t run, int64_t key, int64_t col,
//                                         const Acc (&acc)[Vec], int64_t count) const
//             (count: the run's items; 0 for a dense row without items)
//           void done(int64_t o, int64_t run, int64_t key) const  (once per run, after its stores)
#pragma once
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "prim/block/row_fold.cuh"
#include "prim/device/segmented_reduce/plan.cuh"
#include "prim/device/segmented_reduce/tuning_segmented_reduce.h"
#include "prim/util/cub.cuh"
#include "prim/util/launch.h"

namespace gpuprim {
namespace segmented {

namespace thrust = THRUST_NS_QUALIFIER;  // wrapped in gpuprim_thrust, like CUB (prim/util/cub.cuh)
using SortedTuning = SegmentedReduceTuning::Sorted;
constexpr int kSortedThreads = SortedTuning::kThreads;
constexpr int kSortedThreadsLog2 = 8;
static_assert(kSortedThreads == 1 << kSortedThreadsLog2, "dense mode's strips split a tile by shifts");
constexpr int kCombineThreads = SortedTuning::kCombineThreads;
constexpr int kCombineWarps = kCombineThreads / kWarpSize;

// Items per chunk for n items (see tuning_segmented_reduce.h).
inline int64_t sorted_chunk_size(int64_t n) {
  return std::max<int64_t>(SortedTuning::kMinChunk, (n + SortedTuning::kMaxChunks - 1) / SortedTuning::kMaxChunks);
}

// The runs of the sorted keys, as steps 1-3 leave them on the device.
template <typename K, typename V>
struct Runs {
  const K* unique;             // key of each run
  const V* start;              // [runs + 1]
  const V* num_runs;           // [1]
  const SegmentPlan<V>* plan;  // inclusive scan over the runs
  const V* row_run;            // dense mode: the run of each output row (-1: none); else nullptr
  int64_t chunk;               // items per chunk
  int64_t width;               // columns of a row
  int64_t outer;               // independent slices reduced by the same runs
  int64_t partial_rows;        // partial rows per slice in workspace (a bound on the hot chunks)
};

template <typename K>
struct IsRunHead {
  const K* keys;
  __device__ __forceinline__ bool operator()(int64_t i) const { return i == 0 || keys[i] != keys[i - 1]; }
};

// The plan of run r (zero for the sentinel run and past num_runs), computed while CUB scans it: the last run
// ends at n, so start[num_runs] need not be written yet.
template <typename K, typename V>
struct PlanOfRun {
  const K* keys;
  const V* start;
  const V* num_runs;
  int64_t n;
  K sentinel;
  int64_t chunk;
  __host__ __device__ SegmentPlan<V> operator()(V run) const {
    const int64_t r = static_cast<int64_t>(run), runs = static_cast<int64_t>(*num_runs);
    if (r >= runs) return {V(0), V(0), V(0)};
    const int64_t begin = static_cast<int64_t>(start[r]);
    const int64_t end = r + 1 < runs ? static_cast<int64_t>(start[r + 1]) : n;
    if (keys[begin] == sentinel) return {V(0), V(0), V(0)};
    return plan_segment<V>(end - begin, chunk, /*store_empty=*/false);
  }
};

// Per run r < num_runs: its key unique[r], and row_run[key] = r (dense mode). Thread 0 also writes
// start[num_runs] = n and num_keys (when not null): the runs but the sentinel's, which is last when present.
template <typename K, typename V>
__global__ void __launch_bounds__(kSortedThreads) runs_kernel(const K* __restrict__ keys, V* __restrict__ start,
                                                              const V* __restrict__ num_runs, int64_t n, K sentinel,
                                                              K* __restrict__ unique, V* __restrict__ row_run,
                                                              int64_t* __restrict__ num_keys) {
  const int64_t runs = *num_runs;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    start[runs] = static_cast<V>(n);
    if (num_keys != nullptr) *num_keys = runs > 0 && keys[n - 1] == sentinel ? runs - 1 : runs;
  }
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < runs; r += int64_t(gridDim.x) * blockDim.x) {
    const K key = keys[start[r]];
    unique[r] = key;
    if (row_run != nullptr && key != sentinel) row_run[key] = static_cast<V>(r);
  }
}

// Folds items [begin, end) of slice o at each of the lane's column vectors and hands every vector to `put`.
template <typename Op, int Vec, typename Acc, typename Source, typename Put>
__device__ __forceinline__ void fold_columns(const Source& source, int64_t width, int64_t o, int64_t begin,
                                             int64_t end, int lane, int group, Put put) {
  for (int64_t col = int64_t(lane) * Vec; col < width; col += int64_t(group) * Vec) {
    Acc acc[Vec];
    fold_items<Op, Source::kWeighted, Vec, SortedTuning::kUnroll>(
        begin, end, 1, [&](int64_t i) { return source.template load<Vec>(o, i, col); }, acc);
    put(col, acc);
  }
}

// Work item w of a chunk pass over slice o. !hot: run w, if it is a single chunk (most runs; no search); hot:
// partial row w of the hot runs (found by a binary search in the scanned plan). `group` lanes per item.
template <typename Op, int Vec, typename Acc, typename K, typename V, typename Source, typename Sink>
__device__ __forceinline__ void chunk_item(const Runs<K, V>& runs, const Source& source, const Sink& sink,
                                           int64_t num_runs, int64_t o, int64_t w, bool hot, int lane, int group,
                                           Acc* __restrict__ partials) {
  int64_t r, k;
  SegmentPlan<V> before{V(0), V(0), V(0)};
  if (hot) {
    r = find_segment(runs.plan, num_runs, w, [](const SegmentPlan<V>& p) { return p.partials; });
    if (r > 0) before = runs.plan[r - 1];
    k = w - int64_t(before.partials);
  } else {
    r = w;
    if (r > 0) before = runs.plan[r - 1];
    if (int64_t(runs.plan[r].chunks) - int64_t(before.chunks) != 1) return;  // sentinel or hot run
    k = 0;
  }
  const int64_t run_begin = int64_t(runs.start[r]), run_end = int64_t(runs.start[r + 1]);
  const int64_t begin = run_begin + k * runs.chunk;
  const int64_t end = std::min(run_end, begin + runs.chunk);
  const int64_t key = static_cast<int64_t>(runs.unique[r]);
  if (hot) {
    Acc* row = partials + (o * runs.partial_rows + w) * runs.width;
    fold_columns<Op, Vec, Acc>(source, runs.width, o, begin, end, lane, group, [&](int64_t col, const Acc(&acc)[Vec]) {
#pragma unroll
      for (int j = 0; j < Vec; ++j) row[col + j] = acc[j];
    });
    return;
  }
  fold_columns<Op, Vec, Acc>(source, runs.width, o, begin, end, lane, group, [&](int64_t col, const Acc(&acc)[Vec]) {
    sink.template store<Vec>(o, r, key, col, acc, run_end - run_begin);
  });
  if (lane == 0) sink.done(o, r, key);
}

// Two launches: Hot false (runs of one chunk), then Hot true (the chunks of hot runs).
template <typename Op, int Vec, typename Acc, bool Hot, typename K, typename V, typename Source, typename Sink>
__global__ void __launch_bounds__(kSortedThreads)
    chunk_kernel(Runs<K, V> runs, Source source, Sink sink, int group, Acc* __restrict__ partials) {
  const int lane = threadIdx.x % group;
  const int per_block = kSortedThreads / group;
  const int64_t num_runs = *runs.num_runs;
  if (num_runs == 0) return;
  const int64_t items = Hot ? int64_t(runs.plan[num_runs - 1].partials) : num_runs;
  for (int64_t w = int64_t(blockIdx.x) * per_block + threadIdx.x / group; w < runs.outer * items;
       w += int64_t(gridDim.x) * per_block) {
    chunk_item<Op, Vec, Acc>(runs, source, sink, num_runs, w / items, w % items, Hot, lane, group, partials);
  }
}

// Dense mode: every output row (key) of every slice is stored exactly once in one pass (the identity where a
// row has no items, the folded items of a single-chunk run elsewhere; hot runs are left to combine_kernel),
// instead of a fill of the whole output followed by a scatter of the touched rows. Each block iteration takes
// a tile of kSortedThreads rows: thread t looks up the item range of the tile's row t (its dependent loads done
// for all the tile's rows at once), then groups of `group` lanes fold the tile's rows. A tile's rows are strips
// of 2^strip_log2 rows dealt round-robin over the tiles, so that runs of adjacent rows just below the hot size
// (ids numbered by frequency) spread over many blocks instead of serializing in one. Afterwards the blocks
// share the hot runs' chunks (the Hot chunk pass, here: one launch less, and it overlaps the row stores).
template <typename Op, int Vec, typename Acc, typename K, typename V, typename Source, typename Sink>
__device__ __forceinline__ void dense_rows_pass(const Runs<K, V>& runs, const Source& source, const Sink& sink,
                                                int64_t out_rows, int group, int strip_log2,
                                                Acc* __restrict__ partials) {
  __shared__ V tile_begin[kSortedThreads];
  __shared__ V tile_end[kSortedThreads];
  const int lane = threadIdx.x % group;
  const int per_block = kSortedThreads / group;
  const int64_t strips = ((out_rows - 1) >> strip_log2) + 1;
  const int64_t tiles = ((strips - 1) >> (kSortedThreadsLog2 - strip_log2)) + 1;
  const int strip_mask = (1 << strip_log2) - 1;
  for (int64_t t0 = blockIdx.x; t0 < runs.outer * tiles; t0 += gridDim.x) {  // block-uniform (barriers inside)
    const int64_t o = t0 / tiles, tile = t0 % tiles;
    // Row t of this tile: the tile's strip t >> strip_log2 is strip tile + (t >> strip_log2) * tiles of the output.
    const auto row_of = [&](int t) { return (((t >> strip_log2) * tiles + tile) << strip_log2) + (t & strip_mask); };
    const int64_t k = row_of(threadIdx.x);
    V begin = V(0), end = V(0);  // an empty range: the identity
    if (k < out_rows) {
      const int64_t r = static_cast<int64_t>(runs.row_run[k]);
      if (r >= 0) {
        begin = runs.start[r];
        end = runs.start[r + 1];
      }
    }
    tile_begin[threadIdx.x] = begin;
    tile_end[threadIdx.x] = end;
    __syncthreads();
    for (int t = threadIdx.x / group; t < kSortedThreads; t += per_block) {  // group-uniform
      const int64_t row = row_of(t);
      const int64_t b = static_cast<int64_t>(tile_begin[t]), e = static_cast<int64_t>(tile_end[t]);
      if (row >= out_rows || e - b > runs.chunk) continue;  // past the end, or hot: combine_kernel stores it
      fold_columns<Op, Vec, Acc>(source, runs.width, o, b, e, lane, group, [&](int64_t col, const Acc(&acc)[Vec]) {
        sink.template store<Vec>(o, -1, row, col, acc, e - b);
      });
    }
    __syncthreads();  // the tile's ranges are read before the next tile overwrites them
  }
  const int64_t num_runs = *runs.num_runs;
  const int64_t hot_items = num_runs > 0 ? int64_t(runs.plan[num_runs - 1].partials) : 0;
  for (int64_t w = int64_t(blockIdx.x) * per_block + threadIdx.x / group; w < runs.outer * hot_items;
       w += int64_t(gridDim.x) * per_block) {
    chunk_item<Op, Vec, Acc>(runs, source, sink, num_runs, w / hot_items, w % hot_items, true, lane, group,
                             partials);
  }
}

template <typename Op, int Vec, typename Acc, typename K, typename V, typename Source, typename Sink>
__global__ void __launch_bounds__(kSortedThreads)
    dense_rows_kernel(Runs<K, V> runs, Source source, Sink sink, int64_t out_rows, int group, int strip_log2,
                      Acc* __restrict__ partials) {
  dense_rows_pass<Op, Vec, Acc>(runs, source, sink, out_rows, group, strip_log2, partials);
}

// fp32 lanes of 4 columns, compiled for more resident blocks (tuning_segmented_reduce.h).
template <typename Op, int Vec, typename Acc, typename K, typename V, typename Source, typename Sink>
__global__ void __launch_bounds__(kSortedThreads, SortedTuning::kDenseFp32x4BlocksPerSm)
    dense_rows_fp32x4_kernel(Runs<K, V> runs, Source source, Sink sink, int64_t out_rows, int group,
                             int strip_log2, Acc* __restrict__ partials) {
  dense_rows_pass<Op, Vec, Acc>(runs, source, sink, out_rows, group, strip_log2, partials);
}

// One block per (hot run, slice): warp g folds partial rows g, g + 32, ... in order (kUnroll loads in flight),
// then the 32 warps' values meet in warp order.
template <typename Op, int Vec, typename Acc, typename K, typename V, typename Sink>
__global__ void __launch_bounds__(kCombineThreads)
    combine_kernel(Runs<K, V> runs, Sink sink, const Acc* __restrict__ partials) {
  __shared__ Acc shared[kCombineWarps][kWarpSize * Vec];
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int64_t num_runs = *runs.num_runs;
  if (num_runs == 0) return;  // block-uniform
  const int64_t hot_runs = runs.plan[num_runs - 1].hot;
  for (int64_t h = blockIdx.x; h < runs.outer * hot_runs; h += gridDim.x) {  // block-uniform
    const int64_t o = h / hot_runs;
    const int64_t r = find_segment(runs.plan, num_runs, h % hot_runs, [](const SegmentPlan<V>& p) { return p.hot; });
    const SegmentPlan<V> before = r > 0 ? runs.plan[r - 1] : SegmentPlan<V>{V(0), V(0), V(0)};
    const int64_t chunks = int64_t(runs.plan[r].chunks) - int64_t(before.chunks);
    const Acc* base = partials + (o * runs.partial_rows + int64_t(before.partials)) * runs.width;
    const int64_t key = static_cast<int64_t>(runs.unique[r]);
    const int64_t count = int64_t(runs.start[r + 1]) - int64_t(runs.start[r]);
    for (int64_t tile = 0; tile < runs.width; tile += int64_t(kWarpSize) * Vec) {
      const int64_t col = tile + int64_t(lane) * Vec;
      Acc acc[Vec];
      fold_items<Op, false, Vec, SortedTuning::kUnroll>(
          warp, col < runs.width ? chunks : 0, kCombineWarps,
          [&](int64_t row) { return FoldItem<Vec, Acc, Acc>{load_vec<Vec>(base + row * runs.width + col), Acc(1)}; },
          acc);
#pragma unroll
      for (int j = 0; j < Vec; ++j) shared[warp][lane * Vec + j] = acc[j];
      __syncthreads();
      if (warp == 0 && col < runs.width) {
#pragma unroll
        for (int j = 0; j < Vec; ++j) {
          for (int g = 1; g < kCombineWarps; ++g) acc[j] = Op::combine(acc[j], shared[g][lane * Vec + j]);
        }
        sink.template store<Vec>(o, r, key, col, acc, count);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) sink.done(o, r, key);
  }
}

// Steps 1-5 over keys sorted by a stable radix sort (n items, `sentinel` the largest key, whose items are
// skipped), `outer` slices of rows `width` wide gathered by `source` and stored by `sink`. dense_rows > 0:
// dense mode over that many output rows (keys); num_keys (optional, device): the number of distinct keys
// other than the sentinel. Vec: columns per lane (width % Vec == 0, the Source's and Sink's rows aligned).
template <typename Op, int Vec, typename Acc, typename K, typename V, typename Source, typename Sink>
void reduce_sorted_runs(const K* keys, int64_t n, K sentinel, int64_t outer, int64_t width, const Source& source,
                        const Sink& sink, int64_t dense_rows, int64_t* num_keys, Workspace& workspace,
                        cudaStream_t stream) {
  if (n == 0 || outer == 0 || width == 0) return;
  auto* unique = static_cast<K*>(workspace.allocate(sizeof(K) * n));
  auto* start = static_cast<V*>(workspace.allocate(sizeof(V) * (n + 1)));
  auto* num_runs = static_cast<V*>(workspace.allocate(sizeof(V)));
  auto* plan = static_cast<SegmentPlan<V>*>(workspace.allocate(sizeof(SegmentPlan<V>) * n));
  // CUB sizes of V's width: 32-bit offsets inside CUB (faster kernels) whenever the items fit them.
  const V items = static_cast<V>(n);
  const thrust::counting_iterator<V> positions(0);
  cub_call(workspace, [&](void* temp, size_t& bytes) {
    return cub::DeviceSelect::If(temp, bytes, positions, start, num_runs, items, IsRunHead<K>{keys}, stream);
  });
  V* row_run = nullptr;
  if (dense_rows > 0) {
    // 4 (or 8) bytes per output row, against the width * sizeof(T) bytes per row that a separate fill writes.
    row_run = static_cast<V*>(workspace.allocate(sizeof(V) * dense_rows));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(row_run, 0xff, sizeof(V) * dense_rows, stream));  // every byte 0xff: -1
  }
  runs_kernel<K, V><<<grid_for(n, kSortedThreads), kSortedThreads, 0, stream>>>(keys, start, num_runs, n, sentinel,
                                                                                unique, row_run, num_keys);
  GPUPRIM_LAUNCH_CHECK();
  const int64_t chunk = sorted_chunk_size(n);
  const auto run_plans = thrust::make_transform_iterator(
      thrust::counting_iterator<V>(0), PlanOfRun<K, V>{keys, start, num_runs, n, sentinel, chunk});
  cub_call(workspace, [&](void* temp, size_t& bytes) {
    return cub::DeviceScan::InclusiveScan(temp, bytes, run_plans, plan, SegmentPlanPlus(), items, stream);
  });
  // Hot runs have more than `chunk` items: at most n / chunk of them, with at most 2 n / chunk partial rows.
  const int64_t partial_rows = 2 * (n / chunk) + 1;
  auto* partials = static_cast<Acc*>(workspace.allocate(sizeof(Acc) * outer * partial_rows * width));
  const Runs<K, V> runs{unique, start, num_runs, plan, row_run, chunk, width, outer, partial_rows};
  // The fewest lanes (a power of two up to a warp) whose loads cover a row.
  int group = kWarpSize;
  while (group > 1 && int64_t(group / 2) * Vec >= width) group /= 2;
  auto chunk_pass = chunk_kernel<Op, Vec, Acc, false, K, V, Source, Sink>;
  const int64_t grid_cap = SortedTuning::kChunkBlocksPerSm * resident_blocks(chunk_pass, kSortedThreads);
  if (dense_rows > 0) {
    // A block per tile of rows (no cap: a tile is enough work, and the hardware balances the tail), and at least
    // the blocks the hot chunk pass would have (a small output can have many hot chunks).
    const unsigned tiles = grid_for(outer * dense_rows, kSortedThreads);
    const unsigned grid = std::max(tiles, grid_for(outer * partial_rows, kSortedThreads / group, grid_cap));
    // Strips of at least kDenseStripRows rows and kDenseStripBytes of stores (smaller pieces slowed the writes).
    const int64_t row_bytes = width * Sink::kElementBytes;
    int strip_log2 = 0;
    while ((1 << strip_log2) < SortedTuning::kDenseStripRows ||
           ((1 << strip_log2) < kSortedThreads && (row_bytes << strip_log2) < SortedTuning::kDenseStripBytes)) {
      ++strip_log2;
    }
    if constexpr (std::is_same_v<Acc, float> && Vec == 4) {
      dense_rows_fp32x4_kernel<Op, Vec, Acc><<<grid, kSortedThreads, 0, stream>>>(runs, source, sink, dense_rows,
                                                                                  group, strip_log2, partials);
    } else {
      dense_rows_kernel<Op, Vec, Acc><<<grid, kSortedThreads, 0, stream>>>(runs, source, sink, dense_rows, group,
                                                                           strip_log2, partials);
    }
    GPUPRIM_LAUNCH_CHECK();
  } else {
    chunk_pass<<<grid_for(outer * n, kSortedThreads / group, grid_cap), kSortedThreads, 0, stream>>>(
        runs, source, sink, group, partials);
    GPUPRIM_LAUNCH_CHECK();
    chunk_kernel<Op, Vec, Acc, true><<<grid_for(outer * partial_rows, kSortedThreads / group, grid_cap),
                                       kSortedThreads, 0, stream>>>(runs, source, sink, group, partials);
    GPUPRIM_LAUNCH_CHECK();
  }
  auto combine = combine_kernel<Op, Vec, Acc, K, V, Sink>;
  const int64_t combine_cap = SortedTuning::kCombineBlocksPerSm * resident_blocks(combine, kCombineThreads);
  combine<<<grid_for(outer * (n / chunk + 1), 1, combine_cap), kCombineThreads, 0, stream>>>(runs, sink, partials);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace segmented
}  // namespace gpuprim
