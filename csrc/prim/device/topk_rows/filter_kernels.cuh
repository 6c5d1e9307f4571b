// The threshold filter's kernels (part of filter.cu, included there only): filter_topk_kernel (a block per row,
// or per chunk of a few rows' rows, whose last block merges the row's candidates), the pre-pass's and the levels'
// shared pieces, and rank_merge_kernel (many blocks ranking a row's last candidates).
#pragma once
#include <cstdint>

#include "prim/device/topk_rows/filter_pass.cuh"
#include "prim/util/dependent_launch.cuh"

namespace gpuprim {
namespace topk_rows {
namespace filter {

enum class Admit : int { kAll, kRowHistograms, kOwnHistogram };

// Leaves the best k of from[0, length) (candidates other blocks of this launch wrote: read through
// L2, never from a stale L1 line; 0s are padding) sorted at the buffer's front; returns how many. A
// plain loop, not filter_range's pipeline: few candidates, and filter_range inlined a second time
// into the kernel made it spill.
static __device__ int merge_candidates(FilterShared& s, const Candidate* __restrict__ from, int length, int k) {
  constexpr int kLoads = Tuning::kFilterMergeLoads, kStep = kLoads * kThreads;
  static_assert(kBufferCapacity >= kFilterMaxK + kStep, "a step must fit after a compaction");
  int count = 0;
  Candidate threshold = 0;  // admit c > threshold
  // A step's appends count in added[1] or added[2], in turn (keep_best's is added[0]): thread 0 zeroes a step's
  // counter while the others may still be reading the previous step's.
  for (int base = 0, step = 0; base < length; base += kStep, ++step) {  // uniform
    int* added = &s.added[1 + (step & 1)];
    if (threadIdx.x == 0) *added = 0;
    __syncthreads();
    Candidate c[kLoads];
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const int i = base + j * kThreads + int(threadIdx.x);
      c[j] = i < length ? __ldcg(from + i) : 0;
    }
#pragma unroll
    for (int j = 0; j < kLoads; ++j) offer(s.buffer, added, count, c[j], c[j] > threshold);
    __syncthreads();
    count += *added;
    if (count > kBufferCapacity - kStep) {  // uniform
      const Candidate bound = keep_best(s, count, k);
      count = k;
      threshold = std::max(threshold, bound > 0 ? bound - 1 : 0);
    }
  }
  if (count > k) {
    keep_best(s, count, k);
    count = k;
  }
  sort_buffer_alone(s, count);
  return count;
}

// Candidate c as the row's rank-th best to values / indices: positions are those of x's rows of n; values
// decoded from the key, or read from x where the key loses bits (zeros, NaNs).
template <typename Bits>
__device__ __forceinline__ void write_one(Candidate c, int64_t row, int64_t rank, int k, const Bits* __restrict__ x,
                                          int64_t n, KeyCodec<Bits> codec, Bits* __restrict__ values,
                                          int64_t* __restrict__ indices) {
  const int64_t position = candidate_position(c);
  const auto key = static_cast<Bits>(c >> 32);
  values[row * k + rank] = codec.decodes_exactly(key) ? codec.decode(key) : x[row * n + position];
  indices[row * k + rank] = position;
}
// The row's top k: the buffer's first `kept`, sorted.
template <typename Bits>
__device__ void write_top(const FilterShared& s, int kept, int64_t row, int k, const Bits* __restrict__ x, int64_t n,
                          KeyCodec<Bits> codec, Bits* __restrict__ values, int64_t* __restrict__ indices) {
  for (int i = int(threadIdx.x); i < kept; i += kThreads) {  // kept == k: the row has >= k elements
    write_one(s.buffer[i], row, i, k, x, n, codec, values, indices);
  }
}

// Few rows: where a launch's blocks leave their best candidates, and how the row's last block merges them.
// Per row: `capacity` candidates (chunks x k), `fill` of them appended so far (only kept ones: with the
// pre-pass bound most chunks keep far fewer than k), `done` blocks finished. The row's last block merges the
// row's candidates itself when they are at most kMergeMax; else the next level (a launch over candidates,
// `length_from` = this fill) filters them again, until a level's capacity is at most kMergeMax.
struct RowMerge {
  Candidate* candidates;
  int64_t capacity;
  unsigned* fill;
  unsigned* done;
  const unsigned* length_from;  // levels over candidates: the previous level's fill per row
  unsigned rank_max;            // a row of at most this many candidates is left to rank_merge_kernel
};

// One block per (row, chunk) item: chunk c of a row covers [c * chunk_length, ...) of its row_length
// elements (candidate level: of the previous launch's fill, split evenly on the device). One chunk per row
// (kMergeRows false): the block writes the row's top k (write_top). Few rows (kMergeRows): the block appends
// its best (at most k) to the row's RowMerge buffer and the row's last block merges them (see RowMerge; the
// merge is a variant of its own: its inlined selection and sort made the one-chunk kernel spill registers).
template <typename Bits, typename Input, bool kMergeRows = false>
__global__ void __launch_bounds__(kThreads, Tuning::kFilterMinBlocks)
    filter_topk_kernel(Input input, const typename Input::Element* __restrict__ in, int64_t rows, int64_t row_length,
                       int64_t chunks, int64_t chunk_length, int k, Admit admit,
                       const unsigned* __restrict__ row_histograms, RowMerge merge, const Bits* __restrict__ x,
                       int64_t n, KeyCodec<Bits> codec, Bits* __restrict__ values, int64_t* __restrict__ indices) {
  __shared__ FilterShared s;
  pdl::allow_dependents();  // a next level may launch now: it waits for this one before reading its output
  // Few rows: this launch depends on the op's previous kernel (launch_level): the previous level's output or
  // the pre-pass's counts are read only after the wait; the input x was written before the op.
  if (kMergeRows && (merge.length_from != nullptr || admit == Admit::kRowHistograms)) pdl::wait_for_prerequisites();
  for (int64_t item = blockIdx.x; item < rows * chunks; item += gridDim.x) {  // uniform
    const int64_t row = item / chunks, chunk = item % chunks;
    int64_t length = row_length, step = chunk_length;
    if (kMergeRows && merge.length_from != nullptr) {
      length = merge.length_from[row];  // written by the previous launch
      if (length <= kMergeMax) continue;  // an earlier level's last block merged the row (uniform)
      step = (length + chunks - 1) / chunks;
    }
    const int64_t begin = std::min(length, chunk * step);
    const int64_t end = std::min(length, begin + step);
    Candidate initial_threshold = 0;
    if (admit == Admit::kRowHistograms) {
      initial_threshold = bin_threshold<Bits, kRowHistogramBits>(s, row_histograms + row * kRowHistogramBins, k);
    } else if (admit == Admit::kOwnHistogram) {  // one chunk per row
      if constexpr (Input::kRaw) {
        for (int b = int(threadIdx.x); b < kHistogramBins; b += kThreads) s.bins[b] = 0;
        __syncthreads();
        count_bins<kHistogramBits>(s.bins, x + row * n, 0, n, input);
        __syncthreads();
        initial_threshold = bin_threshold<Bits, kHistogramBits>(s, s.bins, k);
      }
    }
    const int kept =
        filter_range<kMergeRows>(s, input, in + row * row_length, begin, end, k, initial_threshold, !kMergeRows);
    if constexpr (!kMergeRows) {
      write_top(s, kept, row, k, x, n, codec, values, indices);
    } else {
      Candidate* row_candidates = merge.candidates + row * merge.capacity;
      pdl::wait_for_prerequisites();  // the counters are zeroed (a no-op once waited)
      if (threadIdx.x == 0) s.append_at = atomicAdd(merge.fill + row, unsigned(kept));
      __syncthreads();
      for (int i = int(threadIdx.x); i < kept; i += kThreads) row_candidates[s.append_at + i] = s.buffer[i];
      __threadfence();  // the candidates are visible to every block before the count says so
      __syncthreads();
      if (threadIdx.x == 0) s.last_of_row = atomicAdd(merge.done + row, 1u) == unsigned(chunks - 1);
      __syncthreads();
      if (s.last_of_row) {  // every chunk of the row is written
        __threadfence();    // and read only after the count was seen
        const unsigned total = __ldcg(merge.fill + row);
        // At most kMergeMax: merged here, or by rank_merge_kernel after the last level when few enough; else
        // the next level takes them (always true at the last).
        if (total <= kMergeMax && total > merge.rank_max) {
          const int merged = merge_candidates(s, row_candidates, int(total), k);
          write_top(s, merged, row, k, x, n, codec, values, indices);
        }
      }
    }
    __syncthreads();  // the buffer is reused
  }
}

// The few-rows merge where a row's candidates are few enough (RowMerge::rank_max): many blocks rank them at
// once instead of one block selecting and sorting them. A candidate's rank is how many of its row's candidates
// beat it (candidates are distinct), so one of rank r < k is the row's r-th best: written straight out. A row's
// one-block merge (keep_best, then a sort of k) was the end of a long row's critical path at k = 1024;
// ranking costs count^2 compares, spread over the GPU (rank_max bounds rows x count^2).
constexpr int kMaxLevels = 8;         // candidate levels of a few-rows launch, counting the first (raw) one
constexpr int kRankStage = Tuning::kFilterRankStage;  // candidates staged in shared memory at a time
constexpr double kRankCompares = double(kMergeMax) * kMergeMax;  // rank_merge_kernel's budget (filter_topk_typed)
struct Levels {
  const Candidate* candidates[kMaxLevels];
  int64_t capacity[kMaxLevels];
  const unsigned* fill[kMaxLevels];
};

// One block per (group of 32 candidates, row) item: lane l holds candidate 32 * group + l, warp w counts the
// candidates that beat it in the w-th eighth of each stage; warp 0 adds the eighths. A row's candidates are
// at the first level whose fill is <= kMergeMax (every later level skipped the row).
template <typename Bits>
__global__ void __launch_bounds__(kThreads)
    rank_merge_kernel(Levels levels, int64_t rows, int64_t groups, int k, unsigned rank_max,
                      const Bits* __restrict__ x, int64_t n, KeyCodec<Bits> codec, Bits* __restrict__ values,
                      int64_t* __restrict__ indices) {
  constexpr int kWarps = kThreads / kWarpSize;
  __shared__ Candidate stage[kRankStage];
  __shared__ unsigned beaten[kWarps][kWarpSize];
  const int lane = int(threadIdx.x) % kWarpSize, warp = int(threadIdx.x) / kWarpSize;
  pdl::wait_for_prerequisites();  // every level's candidates and fills are written
  for (int64_t item = blockIdx.x; item < rows * groups; item += gridDim.x) {  // uniform
    const int64_t group = item / rows, row = item % rows;
    int level = 0;
    unsigned count = __ldcg(levels.fill[0] + row);
    while (count > unsigned(kMergeMax)) count = __ldcg(levels.fill[++level] + row);  // the last level's is <=
    if (count > rank_max || group * kWarpSize >= count) continue;  // merged by its last block / no candidates here
    const Candidate* from = levels.candidates[level] + row * levels.capacity[level];
    const int64_t mine_at = group * kWarpSize + lane;
    const Candidate mine = mine_at < count ? __ldcg(from + mine_at) : ~Candidate(0);
    unsigned above = 0;  // candidates that beat mine
    for (unsigned base = 0; base < count; base += kRankStage) {  // uniform
      const int staged = int(min(count - base, unsigned(kRankStage)));
      for (int i = int(threadIdx.x); i < staged; i += kThreads) stage[i] = __ldcg(from + base + i);
      __syncthreads();
      const int share = (staged + kWarps - 1) / kWarps;
      const int end = min(staged, (warp + 1) * share);
#pragma unroll 8
      for (int i = warp * share; i < end; ++i) above += stage[i] > mine;  // one broadcast load a compare
      __syncthreads();  // the stage is read before the next one is written
    }
    beaten[warp][lane] = above;
    __syncthreads();
    if (warp == 0 && mine_at < count) {
      unsigned rank = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) rank += beaten[w][lane];
      if (rank < unsigned(k)) write_one(mine, row, rank, k, x, n, codec, values, indices);
    }
    __syncthreads();  // beaten is reused
  }
}


}  // namespace filter
}  // namespace topk_rows
}  // namespace gpuprim
