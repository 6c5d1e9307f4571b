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
// them in the same launch. When chunks * k could be many, an exact histogram pre-pass first bounds each
// row's admitted keys (see row_histogram_kernel), so that on typical data the chunks keep a few hundred
// candidates in all. A row that still kept more than kMergeMax goes through levels over its candidates
// (launched for the most there can be, returning at once for merged rows; a candidate carries its
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

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/launch.h"
#include "prim/util/key_codec.cuh"
#include "prim/device/topk_rows/filter.h"
#include "prim/util/dependent_launch.cuh"

namespace gpuprim {
namespace {

using radix_sort::KeyCodec;
using Candidate = unsigned long long;

constexpr int kThreads = 256;
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kTileElements = 2048;    // elements a block filters between two looks at its buffer
constexpr int kBufferCapacity = 4096;  // candidates in shared memory; a power of two (bitonic sort)
static_assert(kBufferCapacity >= kFilterMaxK + kTileElements, "a tile must fit after a compaction");
constexpr int kRadixBins = 256, kRadixBits = 8;  // keep_best's digits
constexpr int64_t kMinChunk = 2 * kTileElements;  // and >= 8 k: a chunk must do more than sort
constexpr int64_t kMergeMax = 8192;  // candidates a row's last block merges itself (as many as a chunk's elements)

// Positions are < 2^32 - 1 (filter_topk_applies), so every candidate is > 0: 0 pads the buffer.
template <typename Key>
__device__ __forceinline__ Candidate make_candidate(Key key, int64_t position) {
  return (Candidate(key) << 32) | Candidate(~uint32_t(position));
}
__device__ __forceinline__ int64_t candidate_position(Candidate c) { return int64_t(~uint32_t(c)); }

// How a RawInput encodes: by the codec's kind at run time, or as floats / bf16 known at compile time (a few
// integer operations per element: the filter's loop is bound by them).
enum class Keys { kAny, kFloat, kBFloat16 };

// An input makes the candidate of an element at a position (operator()).
// Raw input: elements are the row's bits, encoded to keys here.
template <typename Bits, Keys kKeys = Keys::kAny>
struct RawInput {
  using Element = Bits;
  static constexpr bool kRaw = true;
  KeyEncoder<Bits> encoder;
  __device__ __forceinline__ uint32_t key(Bits bits) const {
    if constexpr (kKeys == Keys::kBFloat16) {
      return encoder.bfloat16(bits);
    } else {
      return encoder.template known_float<kKeys == Keys::kFloat>()(bits);
    }
  }
  __device__ __forceinline__ Candidate operator()(Bits bits, int64_t position) const {
    return make_candidate(key(bits), position);
  }
};
// A previous launch's output: elements are candidates already.
struct CandidateInput {
  using Element = Candidate;
  static constexpr bool kRaw = false;
  __device__ __forceinline__ Candidate operator()(Candidate c, int64_t) const { return c; }
};

constexpr int kHistogramBits = 11, kHistogramBins = 1 << kHistogramBits;  // a block's own histogram (below)
constexpr int kRowHistogramBits = 12, kRowHistogramBins = 1 << kRowHistogramBits;  // the few-rows pre-pass

struct FilterShared {
  Candidate buffer[kBufferCapacity];
  union alignas(16) {
    Candidate kept[kFilterMaxK];  // keep_best's output before it moves back to the buffer's front
    unsigned bins[kHistogramBins];  // one block per row: the row's histogram, before keep_best runs
  };
  unsigned long long warp_totals[kThreads / kWarp];  // bin_threshold's suffix sums
  int histogram[kRadixBins];
  // Appends of tile t count in added[t % 3]: read by all after the tile's barrier and reset by
  // thread 0 two tiles later, after a barrier that every reader passed (no barrier of its own).
  int added[3];
  Candidate bound;  // keep_best: the prefix chosen so far, then the lowest kept candidate's bound
  int remaining, bin_count;
  int last_of_row;     // this block finished its row's last chunk (filter_topk_kernel)
  unsigned append_at;  // where this block's candidates go in its row's RowMerge buffer
  Candidate or_all, and_all;
};
static_assert(sizeof(Candidate) * kFilterMaxK == sizeof(unsigned) * kHistogramBins, "bins overlay kept exactly");

// Appends c (when want) to `to` after `count` (one shared atomic per warp, on *added).
__device__ __forceinline__ void offer(Candidate* to, int* added, int count, Candidate c, bool want) {
  const unsigned wanting = __ballot_sync(kFullMask, want);
  if (wanting == 0) return;
  const int lane = int(threadIdx.x) % kWarp;
  const int leader = __ffs(wanting) - 1;
  int base = 0;
  if (lane == leader) base = atomicAdd(added, __popc(wanting));
  base = __shfl_sync(kFullMask, base, leader);
  if (want) to[count + base + __popc(wanting & ((1u << lane) - 1u))] = c;
}

// A warp's appends in one shared atomic: returns where this thread's `mine` candidates go, counted from
// the *added before this call (every lane of the warp calls it).
__device__ __forceinline__ int reserve(int* added, int mine) {
  const int lane = int(threadIdx.x) % kWarp;
  int inclusive = mine;  // inclusive prefix sum over the lanes
  for (int offset = 1; offset < kWarp; offset *= 2) {
    const int other = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset) inclusive += other;
  }
  int base = 0;
  if (lane == kWarp - 1) base = atomicAdd(added, inclusive);
  return __shfl_sync(kFullMask, base, kWarp - 1) + inclusive - mine;
}

// Keeps exactly the best k of the buffer's first count (> k) candidates, at its front in any
// order, and returns a bound B with: kept candidates >= B > every dropped one. Radix select over
// the bits below the candidates' common prefix, 8 bits a pass (only the candidates still tied
// with the chosen prefix count), stopping once the chosen bin is taken whole. All threads call it
// with the same arguments after a barrier; it ends with one.
__device__ Candidate keep_best(FilterShared& s, int count, int k) {
  const int lane = int(threadIdx.x) % kWarp;
  Candidate any_or = 0, any_and = ~Candidate(0);
  for (int i = int(threadIdx.x); i < count; i += kThreads) {
    any_or |= s.buffer[i];
    any_and &= s.buffer[i];
  }
  for (int offset = kWarp / 2; offset >= 1; offset /= 2) {
    any_or |= __shfl_xor_sync(kFullMask, any_or, offset);
    any_and &= __shfl_xor_sync(kFullMask, any_and, offset);
  }
  if (threadIdx.x == 0) {
    s.or_all = 0;
    s.and_all = ~Candidate(0);
    s.bound = 0;
    s.remaining = k;
  }
  __syncthreads();
  if (lane == 0) {
    atomicOr(&s.or_all, any_or);
    atomicAnd(&s.and_all, any_and);
  }
  __syncthreads();
  // Candidates are distinct and count > 1: they differ in some bit; bits above the highest are common.
  int hi = 64 - __clzll(s.or_all ^ s.and_all);  // window [lo, hi)
  Candidate prefix = hi == 64 ? 0 : (s.or_all >> hi) << hi;
  while (true) {  // uniform: every decision below is read from shared memory after a barrier
    const int lo = hi > kRadixBits ? hi - kRadixBits : 0;
    const Candidate digit_mask = (Candidate(1) << (hi - lo)) - 1;
    for (int b = int(threadIdx.x); b < kRadixBins; b += kThreads) s.histogram[b] = 0;
    __syncthreads();
    for (int i = int(threadIdx.x); i < count; i += kThreads) {
      const Candidate c = s.buffer[i];
      if (hi == 64 || (c >> hi) == (prefix >> hi)) atomicAdd(&s.histogram[int((c >> lo) & digit_mask)], 1);
    }
    __syncthreads();
    if (threadIdx.x < kWarp) {  // warp 0: the bin holding the remaining-th best, from the top
      constexpr int kPerLane = kRadixBins / kWarp;
      const int remaining = s.remaining;  // > 0
      int lane_total = 0;
      for (int j = 0; j < kPerLane; ++j) lane_total += s.histogram[lane * kPerLane + j];
      int running = lane_total;  // inclusive suffix sum over the lanes (higher lanes: higher bins)
      for (int offset = 1; offset < kWarp; offset *= 2) {
        const int other = __shfl_down_sync(kFullMask, running, offset);
        if (lane + offset < kWarp) running += other;
      }
      const int above = running - lane_total;  // in higher bins
      if (above < remaining && remaining <= above + lane_total) {
        int taken = above;
        for (int j = kPerLane - 1; j >= 0; --j) {
          const int bin = lane * kPerLane + j;
          const int in_bin = s.histogram[bin];
          if (taken + in_bin >= remaining) {
            s.bound = prefix | (Candidate(bin) << lo);
            s.remaining = remaining - taken;
            s.bin_count = in_bin;
            break;
          }
          taken += in_bin;
        }
      }
    }
    __syncthreads();
    prefix = s.bound;
    if (s.bin_count == s.remaining || lo == 0) break;  // the chosen bin is kept whole
    hi = lo;  // (two barriers pass before warp 0 writes s.remaining / s.bin_count again)
  }
  // Keep the candidates >= prefix (exactly k of them), through `kept`, back to the front.
  if (threadIdx.x == 0) s.added[0] = 0;  // the caller's tile counters are idle here (see below)
  __syncthreads();
  for (int base = 0; base < count; base += kThreads) {  // uniform trip count: offer is warp-wide
    const int i = base + int(threadIdx.x);
    const Candidate c = i < count ? s.buffer[i] : 0;
    offer(s.kept, &s.added[0], 0, c, i < count && c >= prefix);
  }
  __syncthreads();
  for (int i = int(threadIdx.x); i < k; i += kThreads) s.buffer[i] = s.kept[i];
  __syncthreads();
  return prefix;
}

// Bitonic compare-exchange of element i with element i ^ d (values mine, other) in the merge of width w:
// blocks of w with (i & w) == 0 sort descending (the last merge, w == size, is one such block).
__device__ __forceinline__ Candidate bitonic_keep(Candidate mine, Candidate other, int i, int d, int w) {
  const bool descending = (i & w) == 0, lower = (i & d) == 0;
  return lower == descending ? (mine > other ? mine : other) : (mine < other ? mine : other);
}

// A step of sort_in_registers' network at distance kDistance < kItems: pairs inside thread t's elements.
// kDistance is a constant: v[e + d] with d known only at run time indexed v dynamically (a local array in
// the PTX), and a merge's sort of 1024 took 12.3 us alone on its SM, 9.0 us this way (H200 probe).
template <int kDistance, int kItems>
__device__ __forceinline__ void exchange_in_thread(Candidate (&v)[kItems], int t, int w) {
#pragma unroll
  for (int e = 0; e < kItems; ++e) {
    if ((e & kDistance) == 0 && e + kDistance < kItems) {
      const Candidate a = v[e], b = v[e + kDistance];
      const bool descending = ((t * kItems + e) & w) == 0;
      v[e] = descending == (a > b) ? a : b;
      v[e + kDistance] = descending == (a > b) ? b : a;
    }
  }
}

// sort_buffer's network with kItems elements per thread in registers, thread t holding elements
// t * kItems .. + kItems - 1 of the power of two `size` (threads past it idle): distances below kItems are
// exchanged in a thread, below 32 * kItems through warp shuffles, and only longer ones through shared
// memory (one barrier each, alternating between two halves of the buffer). 1024 elements: 6 barriers
// instead of the 55 of a shared-memory network.
template <int kItems>
__device__ __noinline__ void sort_in_registers(FilterShared& s, int count, int size) {
  static_assert(kBufferCapacity >= 2 * kThreads * kItems, "two exchange halves");
  static_assert(kItems <= 4, "in-thread distances 1 and 2 (exchange_in_thread)");
  const int t = int(threadIdx.x);
  Candidate v[kItems];
#pragma unroll
  for (int e = 0; e < kItems; ++e) {
    const int i = t * kItems + e;
    v[e] = i < count ? s.buffer[i] : 0;  // 0 pads to size
  }
  __syncthreads();  // read before the first exchange overwrites the buffer
  int half = 0;
  for (int w = 2; w <= size; w <<= 1) {
    for (int d = w >> 1; d > 0; d >>= 1) {  // uniform
      if (d >= 32 * kItems) {
        Candidate* exchange = s.buffer + half * (kBufferCapacity / 2);
        half ^= 1;  // a barrier separates the last read of a half from its next write
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
          if (t * kItems + e < size) exchange[t * kItems + e] = v[e];
        }
        __syncthreads();
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
          const int i = t * kItems + e;
          if (i < size) v[e] = bitonic_keep(v[e], exchange[i ^ d], i, d, w);
        }
      } else if (d >= kItems) {
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
          const Candidate other = __shfl_xor_sync(kFullMask, v[e], d / kItems);
          v[e] = bitonic_keep(v[e], other, t * kItems + e, d, w);
        }
      } else if (d == 1) {  // pairs inside the thread: d a constant in each call (v stays in registers)
        exchange_in_thread<1>(v, t, w);
      } else {
        exchange_in_thread<2>(v, t, w);
      }
    }
  }
  __syncthreads();  // every exchange read is done
#pragma unroll
  for (int e = 0; e < kItems; ++e) {
    if (t * kItems + e < size) s.buffer[t * kItems + e] = v[e];
  }
  __syncthreads();
}

// sort_buffer's result (count <= kFilterMaxK) through sort_in_registers: for a row's merge, where one block
// works alone and the latency of 55 barriers (1024 candidates) is what counts. Every thread calls it with the
// same count, after a barrier; it ends with one.
__device__ void sort_buffer_alone(FilterShared& s, int count) {
  static_assert(kFilterMaxK <= 4 * kThreads, "at most four elements a thread");
  int size = 2;
  while (size < count) size <<= 1;
  if (size <= kThreads) {
    sort_in_registers<1>(s, count, size);
  } else if (size <= 2 * kThreads) {
    sort_in_registers<2>(s, count, size);
  } else {
    sort_in_registers<4>(s, count, size);
  }
}

// Sorts the buffer's first `count` candidates in descending order (pads to a power of two with
// 0s): a shared-memory network, one barrier per step. Used where many blocks sort at once (each row's best
// when a block has whole rows): there the H200 ran it faster than sort_buffer_alone's registers and
// shuffles, which made [4096, 32000] k = 1024 25% slower (0.52 -> 0.65 ms). Every thread calls it with the
// same count, after a barrier; it ends with one.
__device__ void sort_buffer(FilterShared& s, int count) {
  int size = 2;
  while (size < count) size <<= 1;
  for (int i = count + int(threadIdx.x); i < size; i += kThreads) s.buffer[i] = 0;
  __syncthreads();
  for (int width = 2; width <= size; width <<= 1) {
    for (int stride = width >> 1; stride > 0; stride >>= 1) {
      for (int t = int(threadIdx.x); t < size / 2; t += kThreads) {
        const int lo = 2 * t - (t & (stride - 1));  // t with a 0 bit inserted at `stride`
        const int hi = lo + stride;
        const bool descending = (lo & width) == 0;  // the last merge (width == size) is descending
        const Candidate a = s.buffer[lo], b = s.buffer[hi];
        if ((a < b) == descending) {
          s.buffer[lo] = b;
          s.buffer[hi] = a;
        }
      }
      __syncthreads();
    }
  }
}

// Loads a tile: this thread's vectors at (its) `from` and every kThreads after it, zeros from `left` (the
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
  const int lane = int(threadIdx.x) % kWarp, warp = int(threadIdx.x) / kWarp;
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
  for (int offset = 1; offset < kWarp; offset *= 2) {
    const unsigned long long other = __shfl_down_sync(kFullMask, running, offset);
    if (lane + offset < kWarp) running += other;
  }
  if (lane == 0) s.warp_totals[warp] = running;
  __syncthreads();
  unsigned long long above = running - total;  // keys in higher bins
  for (int w = warp + 1; w < kThreads / kWarp; ++w) above += s.warp_totals[w];
  const auto wanted = static_cast<unsigned long long>(k);
  if (above < wanted && wanted <= above + total) {  // exactly one thread: the counts add up to n >= k
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
    // A looser bound than the k-th key itself, so the other tiles admit more, but decode [64, 128256] k = 50
    // went 33.6 -> 30.4 us (H200 probe). Whole rows (many tiles) lost: 623 -> 644 us at [4096, 128256] k = 8.
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

// ---- Histogram pre-pass: the row's keys counted by their top bits (exact integer
// counts) give, before the filter reads the row, the highest bin b such that bins >= b hold at
// least k keys: every key below bin b is beaten by k others, so the filter admits only bins >= b —
// on typical data a few hundred keys per row instead of k per chunk. Few rows: a kernel of its own
// adds each chunk's counts to the row's (global atomics, kRowHistogramBits); one block per row: the
// block counts its row in shared memory first (kHistogramBits: no launch, no global counts), then reads
// it again, mostly from L2.
constexpr int64_t kHistogramMinK = 256;  // one block per row: k from which the pre-pass pays (see filter_topk_typed)

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
  constexpr int kInFlight = 4;  // loads per thread before counting (a short chunk is latency-bound)
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
                         Input input, unsigned* __restrict__ row_histograms) {
  __shared__ unsigned histogram[kRowHistogramBins];
  pdl::allow_dependents();  // the filter may launch now: it waits for these counts before reading them
  for (int64_t item = blockIdx.x; item < rows * chunks; item += gridDim.x) {  // uniform
    const int64_t row = item / chunks, chunk = item % chunks;
    const int64_t begin = chunk * chunk_length;
    for (int b = int(threadIdx.x); b < kRowHistogramBins; b += kThreads) histogram[b] = 0;
    __syncthreads();
    count_bins<kRowHistogramBits>(histogram, x + row * n, begin, std::min(n, begin + chunk_length), input);
    __syncthreads();
    pdl::wait_for_prerequisites();  // the counters are zeroed
    for (int b = int(threadIdx.x); b < kRowHistogramBins; b += kThreads) {
      if (histogram[b] != 0) atomicAdd(&row_histograms[row * kRowHistogramBins + b], histogram[b]);  // exact
    }
    __syncthreads();  // the histogram is reused
  }
}

// Where a block's admission threshold starts (see the pre-pass above).
enum class Admit : int { kAll, kRowHistograms, kOwnHistogram };

// Leaves the best k of from[0, length) (candidates other blocks of this launch wrote: read through
// L2, never from a stale L1 line; 0s are padding) sorted at the buffer's front; returns how many. A
// plain loop, not filter_range's pipeline: few candidates, and filter_range inlined a second time
// into the kernel made it spill.
__device__ int merge_candidates(FilterShared& s, const Candidate* __restrict__ from, int length, int k) {
  constexpr int kLoads = 4, kStep = kLoads * kThreads;
  static_assert(kBufferCapacity >= kFilterMaxK + kStep, "a step must fit after a compaction");
  int count = 0;
  Candidate threshold = 0;  // admit c > threshold
  for (int base = 0; base < length; base += kStep) {  // uniform
    if (threadIdx.x == 0) s.added[0] = 0;
    __syncthreads();
    Candidate c[kLoads];
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const int i = base + j * kThreads + int(threadIdx.x);
      c[j] = i < length ? __ldcg(from + i) : 0;
    }
#pragma unroll
    for (int j = 0; j < kLoads; ++j) offer(s.buffer, &s.added[0], count, c[j], c[j] > threshold);
    __syncthreads();
    count += s.added[0];
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
__global__ void __launch_bounds__(kThreads, 4)
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
// one-block merge (keep_best, then a sort of k) took 17 us of one row's 76 at k = 1024 (1480 candidates);
// ranking costs count^2 compares, spread over the GPU (rank_max bounds rows x count^2).
constexpr int kMaxLevels = 8;         // candidate levels of a few-rows launch, counting the first (raw) one
constexpr int kRankStage = 2048;      // candidates staged in shared memory at a time
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
  constexpr int kWarps = kThreads / kWarp;
  __shared__ Candidate stage[kRankStage];
  __shared__ unsigned beaten[kWarps][kWarp];
  const int lane = int(threadIdx.x) % kWarp, warp = int(threadIdx.x) / kWarp;
  pdl::wait_for_prerequisites();  // every level's candidates and fills are written
  for (int64_t item = blockIdx.x; item < rows * groups; item += gridDim.x) {  // uniform
    const int64_t group = item / rows, row = item % rows;
    int level = 0;
    unsigned count = __ldcg(levels.fill[0] + row);
    while (count > unsigned(kMergeMax)) count = __ldcg(levels.fill[++level] + row);  // the last level's is <=
    if (count > rank_max || group * kWarp >= count) continue;  // merged by its last block / no candidates here
    const Candidate* from = levels.candidates[level] + row * levels.capacity[level];
    const int64_t mine_at = group * kWarp + lane;
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

template <typename Bits, typename Input, bool kMergeRows>
void launch_level(Input input, const typename Input::Element* in, int64_t rows, int64_t row_length, int64_t chunks,
                  int64_t chunk_length, int64_t k, Admit admit, const unsigned* row_histograms, RowMerge merge,
                  const Bits* x, int64_t n, KeyCodec<Bits> codec, Bits* values, int64_t* indices,
                  int64_t resident_blocks, cudaStream_t stream) {
  const unsigned grid = grid_for(rows * chunks, 1, 8 * resident_blocks);
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
    const Admit admit = k >= kHistogramMinK ? Admit::kOwnHistogram : Admit::kAll;
    launch_level<Bits, Raw, false>(raw, x, rows, n, 1, n, k, admit, nullptr, RowMerge{}, x, n, codec, values, indices,
                                   resident, stream);
    return;
  }
  // Few rows: chunks of each row, whose last block merges the row's candidates (RowMerge). When chunks x k
  // can exceed kMergeMax, the histogram pre-pass (one more read of the rows, exact integer counts) bounds the
  // candidates first, so that typically few are kept and the merge happens in this launch; levels over the
  // candidates follow (planned for the most there can be; they return at once for merged rows), each cutting
  // its input into chunks of >= 8 k, until a level's capacity is <= kMergeMax. The pre-pass pays for large k too.
  const bool prepass = chunks * k > kMergeMax || k >= kHistogramMinK;
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
  if (prepass) {  // exact per-row histograms of the keys' top bits (rows x kRowHistogramBins), for bin_threshold
    pdl::launch_dependent(row_histogram_kernel<Bits, Raw>, grid_for(rows * chunks, 1, 8 * resident), kThreads, stream,
                          x, rows, n, chunks, chunk_length, raw, row_histograms);
    GPUPRIM_LAUNCH_CHECK();
  }
  // With the pre-pass, rows of at most rank_max candidates are merged by rank_merge_kernel: rows x rank_max^2
  // compares at most, about what one block's merge of kMergeMax candidates costs (a row's own block merges more
  // than that). H200 probe (2026-11-30): one row of 2^24 k = 1024 / 100 75.2 / 64.6 -> 62.2 / 57.1 us, [4, 2^22]
  // k = 64 61.7 -> 56.8 us. Without the pre-pass (at most kMergeMax candidates, or k < 256 and chunks x k <=
  // kMergeMax) the last block's merge is cheap and the rank kernel a launch more: decode [64, 128256] k = 50 /
  // 8 30.4 / 26.3 -> 32.7 / 29.4 us, one row k = 8 43.5 -> 47.7 us. Rows left with more than rank_max after
  // the levels (torch.rand rows, k = 1024) pay that launch for nothing: 2-4 us.
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
  const int64_t groups = (rank_max + kWarp - 1) / kWarp;
  pdl::launch_dependent(rank_merge_kernel<Bits>, grid_for(rows * groups, 1, 2 * resident), kThreads, stream, levels,
                        rows, groups, int(k), rank_max, x, n, codec, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// Floats (fp32, fp16, bf16) take kernels whose encoding is known at compile time.
template <typename Bits>
void filter_topk_any(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                     int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  const bool is_float = codec.kind == radix_sort::KeyKind::kFloat;
  if constexpr (sizeof(Bits) == 2) {
    constexpr Bits kBFloat16Inf = 0x7F80;  // fp16's +inf is 0x7C00
    if (is_float && codec.inf_bits == kBFloat16Inf) {
      return filter_topk_typed<Bits, RawInput<Bits, Keys::kBFloat16>>(x, rows, n, k, codec, values, indices,
                                                                       workspace, stream);
    }
  }
  if (is_float) {
    return filter_topk_typed<Bits, RawInput<Bits, Keys::kFloat>>(x, rows, n, k, codec, values, indices, workspace,
                                                                 stream);
  }
  filter_topk_typed<Bits, RawInput<Bits>>(x, rows, n, k, codec, values, indices, workspace, stream);
}

}  // namespace

void filter_topk(const uint16_t* x, int64_t rows, int64_t n, int64_t k, KeyCodec<uint16_t> codec, uint16_t* values,
                 int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  filter_topk_any(x, rows, n, k, codec, values, indices, workspace, stream);
}

void filter_topk(const uint32_t* x, int64_t rows, int64_t n, int64_t k, KeyCodec<uint32_t> codec, uint32_t* values,
                 int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  filter_topk_any(x, rows, n, k, codec, values, indices, workspace, stream);
}

}  // namespace gpuprim
