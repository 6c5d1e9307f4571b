// The threshold filter's pass over a row (part of filter.cu, included there only): a block filters a range of a
// row into its buffer (filter_range), its admission threshold bounded by an exact histogram of the keys' top bits
// (bin_threshold: the row's own, counted first by count_bins, or the few-rows pre-pass's, row_histogram_kernel).
#pragma once
#include <algorithm>
#include <cstdint>

#include "prim/device/topk_rows/filter_block.cuh"
#include "prim/util/dependent_launch.cuh"

namespace gpuprim {
namespace topk_rows {
namespace filter {

// vectors left from `from` on) past the end.
template <int kLoads>
__device__ __forceinline__ void load_tile(uint4 (&tile)[kLoads], const uint4* __restrict__ from, int64_t left) {
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    tile[j] = int64_t(j) * kThreads < left ? __ldcs(from + j * kThreads) : make_uint4(0, 0, 0, 0);  // read once
  }
}

// The admission threshold from a histogram of a row's keys by their top kBits bits (exact counts; global or
// shared memory, 16-byte aligned): the highest bin b with bins >= b holding at least k keys, as the candidate
// threshold that admits bins >= b (the pre-pass below). Every thread reads kPerThread bins at once (one memory
// round trip, not a lane walking the bins one load after another); a block-wide suffix sum names the thread
// whose bins hold the k-th best key. Every thread returns the same.
template <typename Bits, int kBits>
__device__ Candidate bin_threshold(FilterShared& s, const unsigned* histogram, int k) {
  constexpr int kShift = int(sizeof(Bits)) * 8 - kBits;
  constexpr int kPerThread = (1 << kBits) / kThreads;
  static_assert(kPerThread % 4 == 0, "whole 16-byte loads");
  const int lane = int(threadIdx.x) % kWarpSize, warp = int(threadIdx.x) / kWarpSize;
  unsigned counts[kPerThread];  // bins [threadIdx.x * kPerThread, ...): higher threads hold higher bins
#pragma unroll
  for (int j = 0; j < kPerThread; j += 4) {
    const uint4 four = reinterpret_cast<const uint4*>(histogram + threadIdx.x * kPerThread)[j / 4];
    counts[j] = four.x, counts[j + 1] = four.y, counts[j + 2] = four.z, counts[j + 3] = four.w;
  }
  unsigned long long total = 0;
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) total += counts[j];
  unsigned long long running = total;  // inclusive suffix sum over the warp's lanes
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const unsigned long long other = __shfl_down_sync(kFullMask, running, offset);
    if (lane + offset < kWarpSize) running += other;
  }
  if (lane == 0) s.warp_totals[warp] = running;
  __syncthreads();
  unsigned long long above = running - total;  // keys in higher bins
  for (int w = warp + 1; w < kThreads / kWarpSize; ++w) above += s.warp_totals[w];
  const auto wanted = static_cast<unsigned long long>(k);
  if (above < wanted && wanted <= above + total) {  // exactly one thread: the counts add up to >= k
    unsigned long long taken = above;
    int bin = int(threadIdx.x) * kPerThread;
#pragma unroll
    for (int j = kPerThread - 1; j >= 0; --j) {
      taken += counts[j];
      if (taken >= wanted) {
        bin = int(threadIdx.x) * kPerThread + j;
        break;
      }
    }
    // Candidates of keys in bins >= bin are >= (bin << kShift) << 32: admit c > that - 1.
    s.bound = bin == 0 ? 0 : (Candidate(unsigned(bin) << kShift) << 32) - 1;
  }
  __syncthreads();
  const Candidate threshold = s.bound;
  __syncthreads();  // s.bound is keep_best's too
  return threshold;
}

// Filters positions [begin, end) of one row (`in` = its first element) into the buffer and leaves
// the best (at most k) of those above initial_threshold at its front, sorted when `sorted` (a chunk that
// hands them to its row's merge leaves them unsorted: the merge selects and sorts again); returns how many.
// kFirstTileBins: when it starts admitting all, the first tile's histogram bounds it (few-rows chunks, below).
template <bool kFirstTileBins, typename Input>
__device__ int filter_range(FilterShared& s, Input input, const typename Input::Element* __restrict__ in,
                            int64_t begin, int64_t end, int k, Candidate initial_threshold, bool sorted) {
  using Element = typename Input::Element;
  constexpr int kVector = 16 / int(sizeof(Element));           // elements per 16-byte load
  constexpr int kLoads = kTileElements / (kThreads * kVector);  // loads per thread per tile
  constexpr int64_t kTileVectors = int64_t(kLoads) * kThreads;
  static_assert(kLoads >= 1 && kLoads * kThreads * kVector == kTileElements, "tile shape");
  static_assert(kLoads * kVector <= 32, "a bit per element of a thread's tile");
  // Elements before the first 16-byte boundary and after the last whole vector: < kVector each.
  const auto address = reinterpret_cast<uintptr_t>(in + begin);  // a multiple of sizeof(Element)
  const int64_t head = std::min<int64_t>(int64_t((16 - (address & 15)) & 15) / int64_t(sizeof(Element)), end - begin);
  const int64_t body_begin = begin + head;
  const int64_t vectors = (end - body_begin) / kVector;
  const int64_t body_end = body_begin + vectors * kVector;
  const int64_t loose = head + (end - body_end);  // < 2 * kVector <= kThreads
  // This thread's vectors: from `mine` on, kThreads apart; `left` of them from `mine` (<= 0: none).
  const uint4* mine = reinterpret_cast<const uint4*>(in + body_begin) + threadIdx.x;
  const int64_t left = vectors - int64_t(threadIdx.x);
  // Two tiles in flight while one is filtered (bytes in flight hide the memory latency).
  uint4 next[kLoads], later[kLoads];
  load_tile(next, mine, left);
  load_tile(later, mine + kTileVectors, left - kTileVectors);

  if (threadIdx.x == 0) s.added[0] = s.added[1] = 0;
  __syncthreads();
  int count = 0;
  // Admit candidates > threshold: 0 admits all (every candidate is > 0); a row bound from the
  // histogram pre-pass admits only the bins that can hold the row's top k.
  Candidate threshold = initial_threshold;
  // Tile 0: the loose elements.
  {
    const int64_t t = int64_t(threadIdx.x);
    bool want = false;
    Candidate c = 0;
    if (t < loose) {
      const int64_t position = t < head ? begin + t : body_end + (t - head);
      c = input(in[position], position);
      want = c > threshold;  // every real candidate, not a previous level's 0 padding
    }
    offer(s.buffer, &s.added[0], count, c, want);
  }
  __syncthreads();
  count += s.added[0];

  int tile = 0;
  for (int64_t first = 0; first < vectors; first += kTileVectors) {  // uniform
    ++tile;
    const int slot = tile % 3;
    if (threadIdx.x == 0) s.added[(tile + 1) % 3] = 0;
    uint4 current[kLoads];
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      current[j] = next[j];
      next[j] = later[j];
    }
    load_tile(later, mine + (first + 2 * kTileVectors), left - (first + 2 * kTileVectors));
    // A chunk of a few-rows launch has a few tiles, and its first selection (every candidate of the first
    // tile appended, then cut to k) was a third of its time. The first tile's histogram (exact counts of the
    // keys' top bits, as in the pre-pass below) bounds it instead: the bin holding the tile's k-th best key.
    // A looser bound than the k-th key itself, so the other tiles admit more: it pays for chunks of a few
    // tiles and lost for whole rows (many tiles), hence kFirstTileBins (docs/experiments/topk.md).
    if constexpr (kFirstTileBins && Input::kRaw) {
      if (tile == 1 && threshold == 0 && vectors >= kTileVectors && k <= kTileElements / 4) {  // uniform
        for (int b = int(threadIdx.x); b < kHistogramBins; b += kThreads) s.bins[b] = 0;
        __syncthreads();
        constexpr int kShift = int(sizeof(Element)) * 8 - kHistogramBits;
#pragma unroll
        for (int j = 0; j < kLoads; ++j) {
          const Element* elements = reinterpret_cast<const Element*>(&current[j]);
#pragma unroll
          for (int e = 0; e < kVector; ++e) atomicAdd(&s.bins[input.key(elements[e]) >> kShift], 1u);
        }
        __syncthreads();
        threshold = bin_threshold<Element, kHistogramBits>(s, s.bins, k);  // a full tile holds >= k keys
      }
    }
    // An element costs its candidate and a compare, without branches; the few admitted ones are appended
    // with one atomic per warp. Positions are < 2^32 - 1: 32-bit arithmetic.
    const auto position = uint32_t(body_begin + (first + threadIdx.x) * kVector);  // of current[0]'s first
    uint32_t admitted = 0;  // bit j * kVector + e: element e of load j
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const Element* elements = reinterpret_cast<const Element*>(&current[j]);
      uint32_t bits = 0;
#pragma unroll
      for (int e = 0; e < kVector; ++e) {
        bits |= uint32_t(input(elements[e], position + j * kThreads * kVector + e) > threshold) << e;
      }
      if (int64_t(j) * kThreads < left - first) admitted |= bits << (j * kVector);  // past the end: zeros
    }
    if (__any_sync(kFullMask, admitted != 0)) {
      int at = count + reserve(&s.added[slot], __popc(admitted));
#pragma unroll
      for (int j = 0; j < kLoads; ++j) {
        const Element* elements = reinterpret_cast<const Element*>(&current[j]);
#pragma unroll
        for (int e = 0; e < kVector; ++e) {
          if (admitted & (1u << (j * kVector + e))) {
            s.buffer[at++] = input(elements[e], position + j * kThreads * kVector + e);
          }
        }
      }
    }
    __syncthreads();
    count += s.added[slot];
    // Room for the next tile; and a tighter threshold once k + half a tile are waiting (uniform).
    if (count > kBufferCapacity - kTileElements || count >= k + kTileElements / 2) {
      // keep_best uses added[0] as its own counter: tile counters are re-zeroed before reuse
      // (added[(tile + 1) % 3] by the next tile; added[0] is zeroed below when it is next).
      const Candidate bound = keep_best(s, count, k);
      count = k;
      threshold = std::max(threshold, bound > 0 ? bound - 1 : 0);  // admit candidates >= bound
      if (threadIdx.x == 0) s.added[(tile + 1) % 3] = 0;  // keep_best may have used it (slot 0)
      __syncthreads();
    }
  }
  if (count > k) {
    keep_best(s, count, k);
    count = k;
  }
  if (sorted) sort_buffer(s, count);  // uniform
  return count;
}

// ---- Histogram pre-pass: keys counted by their top bits (exact integer counts) give, before the filter
// reads the row, the highest bin b such that bins >= b hold at least k keys: every key below bin b is beaten
// by k others, so the filter admits only bins >= b — on typical data a few hundred to a few thousand keys per
// row instead of k per chunk. Few rows: a kernel of its own adds the counts of a sample (each chunk's first
// sample_length keys) to the row's (global atomics, kRowHistogramBits): k sampled keys in bins >= b are k keys
// of the row, so the result stays exact and a sparser sample only admits more. One block per row: the
// block counts its whole row in shared memory first (kHistogramBits: no launch, no global counts), then reads
// it again, mostly from L2.

// Adds the bins of positions [begin, end) of `in` to `histogram` (shared memory); `input` (a RawInput)
// makes the keys. Plain loads: the filter reads the same bytes next, and may still find them in L2.
template <int kBits, typename Bits, typename Input>
__device__ void count_bins(unsigned* histogram, const Bits* __restrict__ in, int64_t begin, int64_t end,
                           const Input& input) {
  constexpr int kShift = int(sizeof(Bits)) * 8 - kBits;
  constexpr int kVector = 16 / int(sizeof(Bits));
  const auto address = reinterpret_cast<uintptr_t>(in + begin);
  const int64_t head = std::min<int64_t>(int64_t((16 - (address & 15)) & 15) / int64_t(sizeof(Bits)), end - begin);
  const int64_t vectors = (end - begin - head) / kVector;
  const int64_t body_end = begin + head + vectors * kVector;
  const uint4* body = reinterpret_cast<const uint4*>(in + begin + head);
  constexpr int kInFlight = Tuning::kFilterCountInFlight;  // loads per thread before counting (latency-bound)
  for (int64_t first = threadIdx.x; first < vectors; first += int64_t(kInFlight) * kThreads) {
    uint4 loaded[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int64_t v = first + int64_t(u) * kThreads;
      loaded[u] = v < vectors ? body[v] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      if (first + int64_t(u) * kThreads >= vectors) break;
      const Bits* elements = reinterpret_cast<const Bits*>(&loaded[u]);
#pragma unroll
      for (int e = 0; e < kVector; ++e) atomicAdd(&histogram[input.key(elements[e]) >> kShift], 1u);
    }
  }
  const int64_t loose = head + (end - body_end);
  if (int64_t(threadIdx.x) < loose) {
    const int64_t position = int64_t(threadIdx.x) < head ? begin + threadIdx.x : body_end + (threadIdx.x - head);
    atomicAdd(&histogram[input.key(in[position]) >> kShift], 1u);
  }
}

template <typename Bits, typename Input>
__global__ void __launch_bounds__(kThreads)
    row_histogram_kernel(const Bits* __restrict__ x, int64_t rows, int64_t n, int64_t chunks, int64_t chunk_length,
                         int64_t sample_length, Input input, unsigned* __restrict__ row_histograms) {
  __shared__ unsigned histogram[kRowHistogramBins];
  pdl::allow_dependents();  // the filter may launch now: it waits for these counts before reading them
  for (int64_t item = blockIdx.x; item < rows * chunks; item += gridDim.x) {  // uniform
    const int64_t row = item / chunks, chunk = item % chunks;
    const int64_t begin = chunk * chunk_length;
    for (int b = int(threadIdx.x); b < kRowHistogramBins; b += kThreads) histogram[b] = 0;
    __syncthreads();
    count_bins<kRowHistogramBits>(histogram, x + row * n, begin, std::min(n, begin + sample_length), input);
    __syncthreads();
    pdl::wait_for_prerequisites();  // the counters are zeroed
    for (int b = int(threadIdx.x); b < kRowHistogramBins; b += kThreads) {
      if (histogram[b] != 0) atomicAdd(&row_histograms[row * kRowHistogramBins + b], histogram[b]);  // exact
    }
    __syncthreads();  // the histogram is reused
  }
}


}  // namespace filter
}  // namespace topk_rows
}  // namespace gpuprim
