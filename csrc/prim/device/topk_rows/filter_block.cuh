// The threshold filter's block-level pieces (part of filter.cu, included there only): candidates (a key and an
// inverted position in one 64-bit word), the inputs that make them, the block's shared-memory buffer, warp
// appends (offer, reserve), the radix select that keeps the best k (keep_best) and the bitonic sorts.
#pragma once
#include <cstdint>

#include "prim/device/topk_rows/tuning_topk_rows.h"
#include "prim/util/key_codec.cuh"
#include "prim/util/launch.h"

namespace gpuprim {
namespace topk_rows {
namespace filter {

using Candidate = unsigned long long;

constexpr int kThreads = Tuning::kFilterThreads;
constexpr int kTileElements = Tuning::kFilterTileElements;      // filtered between two looks at the buffer
constexpr int kBufferCapacity = Tuning::kFilterBufferCapacity;  // candidates; a power of two (bitonic sort)
constexpr int64_t kFilterMaxK = Tuning::kFilterMaxK;
static_assert(kBufferCapacity >= kFilterMaxK + kTileElements, "a tile must fit after a compaction");
constexpr int kRadixBins = 256, kRadixBits = 8;  // keep_best's digits
constexpr int64_t kMinChunk = 2 * kTileElements;  // and >= 8 k: a chunk must do more than sort
constexpr int64_t kMergeMax = Tuning::kFilterMergeMax;  // candidates a row's last block merges itself

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

constexpr int kHistogramBits = Tuning::kFilterHistogramBits;  // a block's own histogram (filter_pass.cuh)
constexpr int kHistogramBins = 1 << kHistogramBits;
constexpr int kRowHistogramBits = Tuning::kFilterRowHistogramBits;  // the few-rows pre-pass
constexpr int kRowHistogramBins = 1 << kRowHistogramBits;

struct FilterShared {
  Candidate buffer[kBufferCapacity];
  union alignas(16) {
    Candidate kept[kFilterMaxK];  // keep_best's output before it moves back to the buffer's front
    unsigned bins[kHistogramBins];  // one block per row: the row's histogram, before keep_best runs
  };
  unsigned long long warp_totals[kThreads / kWarpSize];  // bin_threshold's suffix sums
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
  const int lane = int(threadIdx.x) % kWarpSize;
  const int leader = __ffs(wanting) - 1;
  int base = 0;
  if (lane == leader) base = atomicAdd(added, __popc(wanting));
  base = __shfl_sync(kFullMask, base, leader);
  if (want) to[count + base + __popc(wanting & ((1u << lane) - 1u))] = c;
}

// A warp's appends in one shared atomic: returns where this thread's `mine` candidates go, counted from
// the *added before this call (every lane of the warp calls it).
__device__ __forceinline__ int reserve(int* added, int mine) {
  const int lane = int(threadIdx.x) % kWarpSize;
  int inclusive = mine;  // inclusive prefix sum over the lanes
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const int other = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset) inclusive += other;
  }
  int base = 0;
  if (lane == kWarpSize - 1) base = atomicAdd(added, inclusive);
  return __shfl_sync(kFullMask, base, kWarpSize - 1) + inclusive - mine;
}

// Keeps exactly the best k of the buffer's first count (> k) candidates, at its front in any
// order, and returns a bound B with: kept candidates >= B > every dropped one. Radix select over
// the bits below the candidates' common prefix, 8 bits a pass (only the candidates still tied
// with the chosen prefix count), stopping once the chosen bin is taken whole. All threads call it
// with the same arguments after a barrier; it ends with one.
static __device__ Candidate keep_best(FilterShared& s, int count, int k) {
  const int lane = int(threadIdx.x) % kWarpSize;
  Candidate any_or = 0, any_and = ~Candidate(0);
  for (int i = int(threadIdx.x); i < count; i += kThreads) {
    any_or |= s.buffer[i];
    any_and &= s.buffer[i];
  }
  for (int offset = kWarpSize / 2; offset >= 1; offset /= 2) {
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
    if (threadIdx.x < kWarpSize) {  // warp 0: the bin holding the remaining-th best, from the top
      constexpr int kPerLane = kRadixBins / kWarpSize;
      const int remaining = s.remaining;  // > 0
      __syncwarp();  // every lane has read s.remaining before the chosen bin's lane writes it below
      int lane_total = 0;
      for (int j = 0; j < kPerLane; ++j) lane_total += s.histogram[lane * kPerLane + j];
      int running = lane_total;  // inclusive suffix sum over the lanes (higher lanes: higher bins)
      for (int offset = 1; offset < kWarpSize; offset *= 2) {
        const int other = __shfl_down_sync(kFullMask, running, offset);
        if (lane + offset < kWarpSize) running += other;
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
// the PTX, a quarter slower: docs/experiments/topk.md).
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
static __device__ void sort_buffer_alone(FilterShared& s, int count) {
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
// when a block has whole rows): there it ran faster than sort_buffer_alone's registers and shuffles
// (docs/experiments/topk.md). Every thread calls it with the same count, after a barrier; it ends with one.
static __device__ void sort_buffer(FilterShared& s, int count) {
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


}  // namespace filter
}  // namespace topk_rows
}  // namespace gpuprim
