// Threshold-filter top-k: each row is read once. Every element becomes a 64-bit candidate
// (order-preserving key << 32 | ~position): a larger candidate is the better element, equal keys
// rank by lower position, and no two candidates are equal, so "the top k" is one set in one order.
// A block streams its range with 16-byte loads (two tiles in flight) and appends to a shared-memory
// buffer only the candidates at or above its bound — 0 at first, then a lower bound of the k-th
// best kept so far — so after the first tiles almost nothing is appended on typical data. When
// k + half a tile are waiting, a radix select (keep_best) keeps exactly the best k and raises the
// bound. At the end a bitonic sort of the k gives the final order. Every dropped candidate is
// beaten by k kept ones: the result is exact.
//
// Few rows (less than one per resident block): each row is cut into chunks, one block each, that
// append their best (at most k) candidates to the row's buffer; the row's last block to finish merges
// them in the same launch. When chunks * k could be many, a histogram pre-pass over a sample of each row
// first bounds its admitted keys (see row_histogram_kernel), so that on typical data the chunks keep a few
// thousand candidates in all. A row that still kept more than kMergeMax goes through levels over its
// candidates (launched for the most there can be, returning at once for merged rows; a candidate carries its
// position), each cutting its input into chunks the same way, whose last block merges when few enough
// remain. After the pre-pass, a row's final candidates, when few enough, are ranked by many blocks at once
// instead (rank_merge_kernel, a launch after the last level): one block's selection and sort of 1024 was
// the end of a long row's critical path. Workspace: rows x chunks x k candidates, chunks <= resident
// blocks / rows, so O(rows x k + resident blocks x k), plus 4096 counters per row (the pre-pass). The
// counters are zeroed by a kernel of ours so that the pre-pass, the levels and the rank merge can be
// programmatic dependent launches (each waits only where it reads what the kernel before it wrote;
// prim/dependent_launch.cuh).
// One block per row with k >= 256 counts its row's histogram itself first (in shared memory, then
// reads the row again): from a running bound the buffer would fill and be cut to k many times.
// Deterministic: the output is a function of the input (the appends' order never matters: sorted).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "prim/device/topk_rows/filter_kernels.cuh"
#include "prim/device/topk_rows/topk_rows.h"
#include "prim/util/cuda_check.h"
#include "prim/util/dependent_launch.cuh"
#include "prim/util/device_info.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace topk_rows {
namespace filter {
namespace {

// Chunks per row: enough items to fill the GPU (one wave) when rows are few, each chunk >= kMinChunk and
// >= 8 k elements (a multiple of 8 elements, so aligned rows give aligned chunks).
std::pair<int64_t, int64_t> plan_chunks(int64_t rows, int64_t row_length, int64_t k, int64_t resident_blocks) {
  const int64_t min_chunk = std::max<int64_t>(kMinChunk, 8 * k);
  const int64_t by_occupancy = resident_blocks / rows;  // rounded down: one wave, not one and a bit
  const int64_t chunks = std::max<int64_t>(1, std::min(by_occupancy, row_length / min_chunk));
  if (chunks == 1) return {1, row_length};
  const int64_t chunk_length = ((row_length + chunks - 1) / chunks + 7) / 8 * 8;
  return {(row_length + chunk_length - 1) / chunk_length, chunk_length};
}

// Keys of each chunk the pre-pass counts: 1 / stride of the chunk, stride the largest power of two <=
// kFilterSampleMaxStride with stride x k <= kFilterSampleKeys (a sample of 1 / stride admits about stride times
// the keys an exact count would) but at least kFilterSampleMinStride, and never fewer than k (chunk 0 is whole,
// so the row's sample holds >= k).
int64_t sample_length(int64_t chunk_length, int64_t k) {
  int64_t stride = Tuning::kFilterSampleMinStride;
  while (2 * stride <= Tuning::kFilterSampleMaxStride && 2 * stride * k <= Tuning::kFilterSampleKeys) stride *= 2;
  return std::min(chunk_length, std::max(k, chunk_length / stride));
}

template <typename Bits, typename Input, bool kMergeRows>
void launch_level(Input input, const typename Input::Element* in, int64_t rows, int64_t row_length, int64_t chunks,
                  int64_t chunk_length, int64_t k, Admit admit, const unsigned* row_histograms, RowMerge merge,
                  const Bits* x, int64_t n, KeyCodec<Bits> codec, Bits* values, int64_t* indices,
                  int64_t resident_blocks, cudaStream_t stream) {
  const unsigned grid = grid_for(rows * chunks, 1, Tuning::kFilterLevelBlocksPerResident * resident_blocks);
  if constexpr (kMergeRows) {  // after the op's own zeroing, pre-pass or previous level: see filter_topk_kernel
    pdl::launch_dependent(filter_topk_kernel<Bits, Input, kMergeRows>, grid, kThreads, stream, input, in, rows,
                          row_length, chunks, chunk_length, int(k), admit, row_histograms, merge, x, n, codec, values,
                          indices);
  } else {
    filter_topk_kernel<Bits, Input, kMergeRows><<<grid, kThreads, 0, stream>>>(
        input, in, rows, row_length, chunks, chunk_length, int(k), admit, row_histograms, merge, x, n, codec, values,
        indices);
  }
  GPUPRIM_LAUNCH_CHECK();
}

// Zeroes the few-rows path's counters; the kernels after it (launched as its dependents) wait before
// touching them, and start at once.
__global__ void __launch_bounds__(kThreads) zero_counters_kernel(unsigned* __restrict__ counters, int64_t count) {
  pdl::allow_dependents();
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < count; i += int64_t(gridDim.x) * kThreads) {
    counters[i] = 0;
  }
}

// Blocks of the raw-input kernel resident on the whole GPU (all levels use it to size chunks).
template <typename Bits>
int64_t resident_blocks() {
  static const int per_sm = [] {
    int blocks = 0;
    GPUPRIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, filter_topk_kernel<Bits, RawInput<Bits>, true>, kThreads, 0));
    return std::max(blocks, 1);
  }();
  return int64_t(per_sm) * current_device_info().sm_count;
}

// Raw: the RawInput the kernels read x through (fp32 or the general encoder).
template <typename Bits, typename Raw>
void filter_topk_typed(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                       int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  const Raw raw{KeyEncoder<Bits>(codec)};
  const int64_t resident = resident_blocks<Bits>();
  const auto [chunks, chunk_length] = plan_chunks(rows, n, k, resident);
  if (chunks == 1) {
    // Large k: from a running bound the buffer fills and is cut to k many times per row; the block's own
    // histogram of the row (one more read, mostly from L2) bounds it from the start instead.
    const Admit admit = k >= Tuning::kFilterHistogramMinK ? Admit::kOwnHistogram : Admit::kAll;
    launch_level<Bits, Raw, false>(raw, x, rows, n, 1, n, k, admit, nullptr, RowMerge{}, x, n, codec, values, indices,
                                   resident, stream);
    return;
  }
  // Few rows: chunks of each row, whose last block merges the row's candidates (RowMerge). When chunks x k
  // can exceed kMergeMax, the histogram pre-pass (a read of a sample of the rows, exact integer counts) bounds the
  // candidates first, so that typically few are kept and the merge happens in this launch; levels over the
  // candidates follow (planned for the most there can be; they return at once for merged rows), each cutting
  // its input into chunks of >= 8 k, until a level's capacity is <= kMergeMax. The pre-pass pays for large k too.
  const bool prepass = chunks * k > kMergeMax || k >= Tuning::kFilterHistogramMinK;
  std::vector<int64_t> level_chunks;  // after the raw level
  for (int64_t capacity = chunks * k; capacity > kMergeMax;) {
    level_chunks.push_back(plan_chunks(rows, capacity, k, resident).first);
    capacity = level_chunks.back() * k;
  }
  const int64_t histogram_counters = prepass ? rows * kRowHistogramBins : 0;  // first: 16-byte aligned (bin_threshold)
  const int64_t counters = histogram_counters + 2 * rows * int64_t(1 + level_chunks.size());
  auto* zeroed = static_cast<unsigned*>(workspace.allocate(size_t(counters) * sizeof(unsigned)));
  zero_counters_kernel<<<grid_for(counters, 4 * kThreads, resident), kThreads, 0, stream>>>(zeroed, counters);
  GPUPRIM_LAUNCH_CHECK();
  unsigned* row_histograms = prepass ? zeroed : nullptr;
  unsigned* row_counters = zeroed + histogram_counters;
  if (prepass) {  // per-row histograms of a sample's keys by their top bits (rows x kRowHistogramBins)
    const unsigned grid = grid_for(rows * chunks, 1, Tuning::kFilterLevelBlocksPerResident * resident);
    pdl::launch_dependent(row_histogram_kernel<Bits, Raw>, grid, kThreads, stream, x, rows, n, chunks, chunk_length,
                          sample_length(chunk_length, k), raw, row_histograms);
    GPUPRIM_LAUNCH_CHECK();
  }
  // With the pre-pass, rows of at most rank_max candidates are merged by rank_merge_kernel: rows x rank_max^2
  // compares at most, about what one block's merge of kMergeMax candidates costs (a row's own block merges more
  // than that). Without the pre-pass (at most kMergeMax candidates, or k < 256 and chunks x k <= kMergeMax) the
  // last block's merge is cheap and the rank kernel a launch more, so it is not used there; rows left with more
  // than rank_max after the levels (torch.rand rows, k = 1024) pay that launch for nothing (measurements:
  // docs/experiments/topk.md).
  const bool rank_merge = prepass;
  const auto rank_max =
      rank_merge ? unsigned(std::min<int64_t>(kMergeMax, int64_t(std::sqrt(kRankCompares / double(rows))))) : 0u;
  const auto level_merge = [&](int64_t level, int64_t level_chunk_count, const RowMerge* previous) {
    const int64_t capacity = level_chunk_count * k;
    unsigned* fill = row_counters + 2 * rows * level;
    return RowMerge{static_cast<Candidate*>(workspace.allocate(size_t(rows * capacity) * sizeof(Candidate))),
                    capacity, fill, fill + rows, previous ? previous->fill : nullptr, rank_max};
  };
  // Each level cuts its capacity by >= 8 (chunks of >= 8 k keep k each): 8 levels take 8192 x 8^7 candidates.
  if (level_chunks.size() >= size_t(kMaxLevels)) throw std::logic_error("gpuprim topk: too many candidate levels");
  Levels levels{};
  RowMerge merge = level_merge(0, chunks, nullptr);
  launch_level<Bits, Raw, true>(raw, x, rows, n, chunks, chunk_length, k, prepass ? Admit::kRowHistograms : Admit::kAll,
                                row_histograms, merge, x, n, codec, values, indices, resident, stream);
  for (size_t level = 0;; ++level) {
    levels.candidates[level] = merge.candidates;
    levels.capacity[level] = merge.capacity;
    levels.fill[level] = merge.fill;
    if (level == level_chunks.size()) break;
    const RowMerge next = level_merge(int64_t(level) + 1, level_chunks[level], &merge);
    launch_level<Bits, CandidateInput, true>(CandidateInput{}, merge.candidates, rows, merge.capacity,
                                             level_chunks[level], 0, k, Admit::kAll, nullptr, next, x, n, codec,
                                             values, indices, resident, stream);
    merge = next;
  }
  if (!rank_merge) return;
  const int64_t groups = (rank_max + kWarpSize - 1) / kWarpSize;
  const unsigned grid = grid_for(rows * groups, 1, Tuning::kFilterRankBlocksPerResident * resident);
  pdl::launch_dependent(rank_merge_kernel<Bits>, grid, kThreads, stream, levels, rows, groups, int(k), rank_max, x, n,
                        codec, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace
}  // namespace filter

// Floats (fp32, fp16, bf16) take kernels whose encoding is known at compile time.
template <typename Bits>
void filter_topk(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                 int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  using filter::Keys;
  using filter::RawInput;
  const bool is_float = codec.kind == KeyKind::kFloat;
  if constexpr (sizeof(Bits) == 2) {
    if (is_float && codec.inf_bits == kBFloat16InfBits) {  // not fp16 (kFloat16InfBits)
      return filter::filter_topk_typed<Bits, RawInput<Bits, Keys::kBFloat16>>(x, rows, n, k, codec, values, indices,
                                                                               workspace, stream);
    }
  }
  if (is_float) {
    return filter::filter_topk_typed<Bits, RawInput<Bits, Keys::kFloat>>(x, rows, n, k, codec, values, indices,
                                                                         workspace, stream);
  }
  filter::filter_topk_typed<Bits, RawInput<Bits>>(x, rows, n, k, codec, values, indices, workspace, stream);
}

template void filter_topk<uint16_t>(const uint16_t*, int64_t, int64_t, int64_t, KeyCodec<uint16_t>, uint16_t*,
                                    int64_t*, Workspace&, cudaStream_t);
template void filter_topk<uint32_t>(const uint32_t*, int64_t, int64_t, int64_t, KeyCodec<uint32_t>, uint32_t*,
                                    int64_t*, Workspace&, cudaStream_t);

}  // namespace topk_rows
}  // namespace gpuprim
