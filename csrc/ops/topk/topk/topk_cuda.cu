// Kernels of gpuprim::topk. Elements become order-preserving unsigned keys (prim/radix_sort.cuh's
// codec, inverted when !largest) so that a larger key is always a better element: NaN the best
// (worst when !largest), -0.0 equal to +0.0; among equal keys the lower position wins. Paths:
//   rows of <= 512 elements, k <= 64: one warp per row (many rows per block), the row in registers,
//     k rounds of a warp-wide (key, position) argmax; only the winner's lane rescans its items.
//   16- and 32-bit keys, k <= 1024, rows < 2^32 - 1 elements: the threshold filter, one read of the
//     row (topk_filter_cuda.cu). The paths below serve the other cases (8- and 64-bit keys, larger
//     k, longer rows).
//   k = 1 (longer rows): a block-wide argmax per row (or per slice, then over the slices' winners).
//   few long rows (rows <= sm_count / 2, n >= 2^14): several blocks per row, one launch per step
//     of the radix select below (histograms added across blocks with integer atomics: exact).
//   other rows: one block per row, radix select: per 8-bit digit (most significant first) a shared
//     memory histogram of the keys still matching the chosen prefix finds the k-th key exactly;
//     then one pass in index order (block-wide scans) gathers the keys above it and the first
//     (lowest position) keys equal to it; then, for k <= 2048, a block radix sort of those k
//     (stable, so ties stay in position order) puts them in final order (beyond: the glue sorts).
//     When a digit's bin is small enough, its keys move to shared memory (2 or 3 row reads).
// Every path is deterministic: the result is a function of the input (unique under the tie rule).
// Bytes per element (fp32, radix select): 2 reads of the row (4 bytes each) when the first digit's
// bin fits in shared memory, 3 when the second's does, else 4 digit passes and a gather (5 reads);
// the multi-block path reads it 6 times (4 digits, count, gather); k = 1 and the warp path once.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/device/topk_rows/filter.h"
#include "ops/topk/topk/topk_launch.h"
#include "prim/device/topk_rows/short_rows.cuh"
#include "prim/util/cub.cuh"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace {

using radix_sort::KeyCodec;
using radix_sort::KeyKind;

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kWarpRowsPerBlock = 8;  // 256 threads, 8 rows at a time
constexpr int kWarpMaxItems = 16;     // rows of up to 512 elements in registers
constexpr int64_t kWarpMaxK = 64;     // k rounds of a warp argmax
constexpr int kSelectThreads = 512;   // radix select: one block per row
constexpr int kRadixBits = 8, kRadixBins = 1 << kRadixBits;
constexpr uint32_t kNoPosition = 0xFFFFFFFFu;  // an empty candidate: loses to every element
// Few long rows (rows <= sm_count / 2, n >= 2^14) get several blocks each, about 4 per SM in all,
// each over a slice of >= 2048 positions (< 2^32, so 32-bit shared counters suffice).
constexpr int kMultiMaxRowsPerSm = 2;
constexpr int64_t kMultiMinRow = int64_t(1) << 14;
constexpr int kMultiBlocksPerSm = 4;
constexpr int64_t kMultiMinSlice = 4 * kSelectThreads;
constexpr int64_t kMultiMaxSlice = int64_t(1) << 30;

// Keys as shuffled between lanes (at least 32 bits).
template <typename Bits>
using WideKey = std::conditional_t<sizeof(Bits) <= 4, uint32_t, unsigned long long>;

// This lane's best live item (items j hold row positions lane + 32 j; lower j wins ties).
template <typename Key, int kItems>
__device__ __forceinline__ void lane_best(const Key (&keys)[kItems], uint32_t alive, int lane, Key& best_key,
                                          uint32_t& best_position) {
  best_key = 0;
  best_position = kNoPosition;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if (((alive >> j) & 1u) && (best_position == kNoPosition || keys[j] > best_key)) {
      best_key = keys[j];
      best_position = uint32_t(lane + j * kWarp);
    }
  }
}

// Short rows: one warp per row; the row's keys stay in registers; k rounds of a warp argmax write
// the results in final order (the winner's lane writes its element and rescans its own items).
template <typename Bits, int kItems>
__global__ void __launch_bounds__(kWarp* kWarpRowsPerBlock)
    warp_topk_kernel(const Bits* __restrict__ x, int64_t rows, int n, int k, KeyCodec<Bits> codec,
                     Bits* __restrict__ values, int64_t* __restrict__ indices) {
  using Key = WideKey<Bits>;
  const int lane = int(threadIdx.x) % kWarp;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / kWarp);
  for (int64_t row = int64_t(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp; row < rows;
       row += warps) {  // uniform across the warp
    const Bits* in = x + row * n;
    Key keys[kItems];
    uint32_t alive = 0;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int position = lane + j * kWarp;
      keys[j] = 0;
      if (position < n) {
        keys[j] = Key(codec.encode(in[position]));
        alive |= 1u << j;
      }
    }
    Key best_key;
    uint32_t best_position;
    lane_best(keys, alive, lane, best_key, best_position);
    for (int rank = 0; rank < k; ++rank) {
      Key key = best_key;
      uint32_t position = best_position;
      warp::best(key, position);  // k <= n: always a real element
      if (int(position % kWarp) == lane) {
        values[row * k + rank] = in[position];
        indices[row * k + rank] = int64_t(position);
        alive &= ~(1u << (position / kWarp));
        lane_best(keys, alive, lane, best_key, best_position);
      }
    }
  }
}

// Final order of one row's gathered k (k <= kSelectThreads * kSortItems): a stable block radix sort
// by descending key (ascending inverted key), carrying positions; ties keep the gather's position
// order. Slots past k get the largest inverted key and, coming after every real slot, stay last.
// The caller has made the gathered results visible to the block (a barrier after the writes).
template <typename Bits, int kSortItems>
__device__ __forceinline__ void sort_selected(
    const Bits* __restrict__ in, int64_t k, KeyCodec<Bits> codec, Bits* __restrict__ row_values,
    int64_t* __restrict__ row_indices,
    typename cub::BlockRadixSort<Bits, kSelectThreads, kSortItems, int64_t>::TempStorage& temp) {
  Bits keys[kSortItems];
  int64_t positions[kSortItems];
#pragma unroll
  for (int j = 0; j < kSortItems; ++j) {
    const int64_t slot = int64_t(threadIdx.x) * kSortItems + j;
    keys[j] = Bits(~Bits(0));
    positions[j] = 0;
    if (slot < k) {
      keys[j] = Bits(~codec.encode(row_values[slot]));
      positions[j] = row_indices[slot];
    }
  }
  // Barriers inside: every read above happens before any write below.
  cub::BlockRadixSort<Bits, kSelectThreads, kSortItems, int64_t>(temp).SortBlockedToStriped(keys, positions);
#pragma unroll
  for (int j = 0; j < kSortItems; ++j) {
    const int64_t rank = int64_t(j) * kSelectThreads + threadIdx.x;
    if (rank < k) {
      row_values[rank] = in[positions[j]];
      row_indices[rank] = positions[j];
    }
  }
}

// Adds one to each calling lane's bin (bin < 0: nothing), one shared-memory atomic per distinct
// bin of the warp: the digit passes over a whole row hit few hot bins (e.g. the top digit of
// similar floats), where per-element atomics on one address would serialize. Every lane of the
// warp must call it (the callers loop uniformly over the block).
__device__ __forceinline__ void add_to_histogram(int bin, uint32_t* histogram, unsigned long long* wide_histogram,
                                                 bool wide_counts) {
  const unsigned peers = __match_any_sync(kFullMask, bin);
  if (bin >= 0 && int(threadIdx.x % kWarp) == __ffs(peers) - 1) {
    if (wide_counts) {
      atomicAdd(&wide_histogram[bin], static_cast<unsigned long long>(__popc(peers)));
    } else {
      atomicAdd(&histogram[bin], static_cast<uint32_t>(__popc(peers)));
    }
  }
}

// Passes over a row load kLoadItems elements per thread before using them (more loads in flight).
constexpr int kLoadItems = 4;
constexpr int kTile = kSelectThreads * kLoadItems;

// Counts, by the digit at `shift`, the keys of positions [begin, end) that match `prefix` on `mask`.
// Block-uniform loop (every lane reaches add_to_histogram's match).
template <typename Bits>
__device__ __forceinline__ void count_digits(const Bits* __restrict__ in, int64_t begin, int64_t end,
                                             KeyCodec<Bits> codec, Bits prefix, Bits mask, int shift,
                                             uint32_t* histogram, unsigned long long* wide_histogram,
                                             bool wide_counts) {
  for (int64_t base = begin; base < end; base += kTile) {
    Bits keys[kLoadItems];
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      keys[j] = i < end ? codec.encode(in[i]) : Bits(0);
    }
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      const bool counted = i < end && Bits(keys[j] & mask) == prefix;
      add_to_histogram(counted ? int((keys[j] >> shift) & (kRadixBins - 1)) : -1, histogram, wide_histogram,
                       wide_counts);
    }
  }
}

// Walks positions [begin, end) in order, a tile at a time (thread t holds base + t * kLoadItems + j:
// the blocked arrangement, so the scan order is position order). classify(key) gives 1 (first
// group), 1 << 16 (second group) or 0; emit(position, key, first_group, rank) gets each classified
// element with its rank in its group (counting from first_base / second_base). Stops once both
// groups reached their targets. Block-uniform; ends with a barrier after each tile.
template <typename Bits, typename Classify, typename Emit>
__device__ __forceinline__ void scan_in_order(const Bits* __restrict__ in, int64_t begin, int64_t end,
                                              KeyCodec<Bits> codec,
                                              typename cub::BlockScan<uint32_t, kSelectThreads>::TempStorage& temp,
                                              unsigned long long first_base, unsigned long long first_target,
                                              unsigned long long second_base, unsigned long long second_target,
                                              Classify classify, Emit emit) {
  for (int64_t base = begin; base < end; base += kTile) {
    if (first_base >= first_target && second_base >= second_target) break;  // uniform
    Bits keys[kLoadItems];
    uint32_t flags[kLoadItems], ranks[kLoadItems];
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(threadIdx.x) * kLoadItems + j;
      keys[j] = i < end ? codec.encode(in[i]) : Bits(0);
    }
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(threadIdx.x) * kLoadItems + j;
      flags[j] = i < end ? classify(keys[j]) : 0u;
    }
    uint32_t total;  // per tile at most kTile (< 2^16) in each half
    cub::BlockScan<uint32_t, kSelectThreads>(temp).ExclusiveSum(flags, ranks, total);
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(threadIdx.x) * kLoadItems + j;
      if (flags[j] == 1u) {
        emit(i, keys[j], true, first_base + (ranks[j] & 0xFFFFu));
      } else if (flags[j] != 0u) {
        emit(i, keys[j], false, second_base + (ranks[j] >> 16));
      }
    }
    first_base += total & 0xFFFFu;
    second_base += total >> 16;
    __syncthreads();  // temp is reused
  }
}

// Radix select, thread 0: the bin (digit) holding the remaining-th best of the counted keys, how many
// are still to be taken from it, and its count; every thread returns after a barrier.
__device__ __forceinline__ void choose_digit(const uint32_t* histogram, const unsigned long long* wide_histogram,
                                             bool wide_counts, unsigned long long remaining, int* chosen_digit,
                                             unsigned long long* chosen_remaining, unsigned long long* chosen_count) {
  if (threadIdx.x == 0) {
    unsigned long long above = 0;  // counted keys in higher bins
    int digit = 0;
    unsigned long long count = 0;
    for (int bin = kRadixBins - 1; bin >= 0; --bin) {
      count = wide_counts ? wide_histogram[bin] : histogram[bin];
      if (above + count >= remaining) {
        digit = bin;
        break;
      }
      above += count;
    }
    *chosen_digit = digit;
    *chosen_remaining = remaining - above;
    *chosen_count = count;
  }
  __syncthreads();
}

// Shared memory for the candidates of the one-block radix select (keys and 32-bit positions).
constexpr int kCandidateBytes = 32 * 1024;
template <typename Bits>
constexpr int candidate_capacity() {
  return kCandidateBytes / int(sizeof(Bits) + sizeof(uint32_t));
}

// One block per row: radix select of the k-th key, gather in position order, optional block sort.
//   1. The k-th best key, digit by digit from the top: among the keys matching `prefix` on `mask`,
//      `remaining` are still to be taken; the digit whose bin holds the remaining-th best is fixed.
//   2. A digit pass usually leaves few keys in the chosen bin: as soon as they fit in shared memory
//      (and the key has more digits), one more read of the row writes the keys whose fixed digits
//      are higher (certainly chosen) to the output in position order and copies the chosen bin's
//      keys, with their positions, to shared memory in position order; the other digits are found
//      there and the final gather reads only them: after the first digit, 2 reads of the row instead
//      of 5 (fp32), after the second 3.
//   3. Gather in position order (block-wide scans): the keys above the k-th (all of them) and the
//      first `remaining` equal to it. Keys that tie are always in the same group (definite or
//      candidate; above or equal), so within a tie the output keeps position order.
//   4. For k <= kSelectThreads * kSortItems a stable block radix sort puts the k in final order.
template <typename Bits, int kSortItems, bool kSortInBlock>
__global__ void __launch_bounds__(kSelectThreads)
    radix_topk_kernel(const Bits* __restrict__ x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec,
                      Bits* __restrict__ values, int64_t* __restrict__ indices) {
  using BlockScan = cub::BlockScan<uint32_t, kSelectThreads>;
  using BlockSort = cub::BlockRadixSort<Bits, kSelectThreads, kSortItems, int64_t>;
  constexpr int kCapacity = candidate_capacity<Bits>();
  constexpr int kKeyBits = int(sizeof(Bits) * 8);
  constexpr int kTopShift = kKeyBits - kRadixBits;
  __shared__ union {
    typename BlockSort::TempStorage sort;  // step 4 only
    struct {
      typename BlockScan::TempStorage scan;
      Bits keys[kCapacity];
      uint32_t positions[kCapacity];
    } select;
  } temp;
  // 32-bit counters (native shared-memory atomics) unless the row is too long for them.
  __shared__ uint32_t histogram[kRadixBins];
  __shared__ unsigned long long wide_histogram[kRadixBins];
  __shared__ int chosen_digit;
  __shared__ unsigned long long chosen_remaining, chosen_count;
  const bool wide_counts = n > int64_t(UINT32_MAX);

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform across the block
    const Bits* in = x + row * n;
    Bits* row_values = values + row * k;
    int64_t* row_indices = indices + row * k;

    // 1. Digit passes over the row (all of them, or the first only when the candidates fit).
    Bits prefix = 0, mask = 0;
    unsigned long long remaining = static_cast<unsigned long long>(k);
    bool use_candidates = false;
    int shift = kTopShift;
#pragma unroll 1
    for (; shift >= 0; shift -= kRadixBits) {
      for (int bin = threadIdx.x; bin < kRadixBins; bin += kSelectThreads) {
        histogram[bin] = 0;
        wide_histogram[bin] = 0;
      }
      __syncthreads();
      count_digits(in, 0, n, codec, prefix, mask, shift, histogram, wide_histogram, wide_counts);
      __syncthreads();
      choose_digit(histogram, wide_histogram, wide_counts, remaining, &chosen_digit, &chosen_remaining, &chosen_count);
      prefix = Bits(prefix | Bits(Bits(chosen_digit) << shift));
      mask = Bits(mask | Bits(Bits(kRadixBins - 1) << shift));
      remaining = chosen_remaining;  // (thread 0 writes these again only after two more barriers)
      if (shift > 0 && !wide_counts && chosen_count <= kCapacity) {  // uniform; digits remain
        use_candidates = true;
        shift -= kRadixBits;
        break;
      }
    }

    if (use_candidates) {
      // 2. One more read: definite keys (higher fixed digits) to the output, candidates to shared memory.
      const Bits chosen_prefix = prefix;  // the digits fixed so far (under mask)
      const unsigned long long definite = static_cast<unsigned long long>(k) - remaining;
      const int num_candidates = int(chosen_count);
      scan_in_order(
          in, 0, n, codec, temp.select.scan, 0ull, definite, 0ull, static_cast<unsigned long long>(num_candidates),
          [&](Bits key) {
            const Bits fixed = Bits(key & mask);
            return fixed > chosen_prefix ? 1u : (fixed == chosen_prefix ? (1u << 16) : 0u);
          },
          [&](int64_t i, Bits key, bool is_definite, unsigned long long rank) {
            if (is_definite) {
              row_values[rank] = in[i];
              row_indices[rank] = i;
            } else if (rank < static_cast<unsigned long long>(kCapacity)) {  // always (exact counts)
              temp.select.keys[rank] = key;
              temp.select.positions[rank] = uint32_t(i);
            }
          });
      // 1 (continued). The remaining digits, over the candidates.
#pragma unroll 1
      for (; shift >= 0; shift -= kRadixBits) {
        for (int bin = threadIdx.x; bin < kRadixBins; bin += kSelectThreads) histogram[bin] = 0;
        __syncthreads();
        for (int c = threadIdx.x; c < num_candidates; c += kSelectThreads) {
          const Bits key = temp.select.keys[c];
          if (Bits(key & mask) == prefix) atomicAdd(&histogram[int((key >> shift) & (kRadixBins - 1))], 1u);
        }
        __syncthreads();
        choose_digit(histogram, wide_histogram, false, remaining, &chosen_digit, &chosen_remaining, &chosen_count);
        prefix = Bits(prefix | Bits(Bits(chosen_digit) << shift));
        mask = Bits(mask | Bits(Bits(kRadixBins - 1) << shift));
        remaining = chosen_remaining;
      }
      // 3. Gather from the candidates, in position order, after the definite keys.
      const Bits threshold = prefix;
      const unsigned long long take_equal = remaining;
      const unsigned long long num_above = static_cast<unsigned long long>(k) - take_equal;
      unsigned long long above_base = definite, equal_base = 0;
      for (int base = 0; base < num_candidates; base += kSelectThreads) {
        const int c = base + int(threadIdx.x);
        uint32_t flags = 0;
        if (c < num_candidates) {
          const Bits key = temp.select.keys[c];
          flags = key > threshold ? 1u : (key == threshold ? (1u << 16) : 0u);
        }
        uint32_t rank, total;
        BlockScan(temp.select.scan).ExclusiveSum(flags, rank, total);
        if (flags == 1u) {
          const unsigned long long slot = above_base + (rank & 0xFFFFu);
          const int64_t position = temp.select.positions[c];
          row_values[slot] = in[position];
          row_indices[slot] = position;
        } else if (flags != 0u) {
          const unsigned long long equal_rank = equal_base + (rank >> 16);
          if (equal_rank < take_equal) {
            const int64_t position = temp.select.positions[c];
            row_values[num_above + equal_rank] = in[position];
            row_indices[num_above + equal_rank] = position;
          }
        }
        above_base += total & 0xFFFFu;
        equal_base += total >> 16;
        __syncthreads();  // temp.select.scan is reused
      }
    } else {
      // 3. Gather from the row, in position order: every key above the threshold (k - remaining of
      //    them), then the first `remaining` equal to it. One block-wide scan per tile counts both
      //    (packed in one word: above in the low 16 bits, equal in the high 16).
      const Bits threshold = prefix;
      const unsigned long long take_equal = remaining;
      const unsigned long long num_above = static_cast<unsigned long long>(k) - take_equal;
      scan_in_order(
          in, 0, n, codec, temp.select.scan, 0ull, num_above, 0ull, take_equal,
          [&](Bits key) { return key > threshold ? 1u : (key == threshold ? (1u << 16) : 0u); },
          [&](int64_t i, Bits, bool above, unsigned long long rank) {
            if (above) {
              row_values[rank] = in[i];
              row_indices[rank] = i;
            } else if (rank < take_equal) {
              row_values[num_above + rank] = in[i];
              row_indices[num_above + rank] = i;
            }
          });
    }

    // 4. Final order (sort_selected).
    if constexpr (kSortInBlock) {
      __syncthreads();  // the gathered results (global memory) are visible to the whole block
      sort_selected<Bits, kSortItems>(in, k, codec, row_values, row_indices, temp.sort);
    }
    __syncthreads();  // the next row reuses shared memory
  }
}

// ---- Few long rows: several blocks per row. Each step that needs the whole row's counts is its
// own launch: per digit a histogram kernel (shared-memory counts added to the row's global
// histogram with integer atomics: exact) and a choose kernel; then a count kernel (keys above /
// equal to the threshold per slice) and a gather kernel (each block offsets its writes by the
// counts of the slices before it, so the order is still position order); then the block sort.
struct SelectState {
  unsigned long long prefix, mask, remaining;  // the key bits fixed so far, and how many still to take
};

__global__ void multi_init_kernel(int64_t rows, int64_t k, SelectState* __restrict__ state) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row < rows) state[row] = SelectState{0ull, 0ull, static_cast<unsigned long long>(k)};
}

// Block (row, part) covers positions [part * slice, min(n, (part + 1) * slice)) of its row; slice < 2^32.
template <typename Bits>
__global__ void __launch_bounds__(kSelectThreads)
    multi_histogram_kernel(const Bits* __restrict__ x, int64_t n, int64_t blocks_per_row, int64_t slice,
                           KeyCodec<Bits> codec, int shift, const SelectState* __restrict__ state,
                           unsigned long long* __restrict__ histograms) {
  __shared__ uint32_t histogram[kRadixBins];
  const int64_t row = blockIdx.x / blocks_per_row, part = blockIdx.x % blocks_per_row;
  const int64_t begin = part * slice, end = begin + slice < n ? begin + slice : n;
  for (int bin = threadIdx.x; bin < kRadixBins; bin += kSelectThreads) histogram[bin] = 0;
  __syncthreads();
  const Bits prefix = Bits(state[row].prefix), mask = Bits(state[row].mask);
  const Bits* in = x + row * n;
  count_digits(in, begin, end, codec, prefix, mask, shift, histogram, nullptr, false);
  __syncthreads();
  for (int bin = threadIdx.x; bin < kRadixBins; bin += kSelectThreads) {
    if (histogram[bin] != 0) atomicAdd(&histograms[row * kRadixBins + bin], (unsigned long long)histogram[bin]);
  }
}

// One thread per row: fixes the next digit from the row's histogram, and clears it for the next pass.
__global__ void multi_choose_kernel(int64_t rows, int shift, SelectState* __restrict__ state,
                                    unsigned long long* __restrict__ histograms) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  unsigned long long* histogram = histograms + row * kRadixBins;
  SelectState s = state[row];
  unsigned long long above = 0;
  int digit = -1;
  for (int bin = kRadixBins - 1; bin >= 0; --bin) {
    const unsigned long long count = histogram[bin];
    histogram[bin] = 0;
    if (digit < 0) {
      if (above + count >= s.remaining) {
        digit = bin;
      } else {
        above += count;
      }
    }
  }
  if (digit < 0) digit = 0;  // unreachable (remaining <= matching keys); keeps the state defined
  s.prefix |= static_cast<unsigned long long>(digit) << shift;
  s.mask |= static_cast<unsigned long long>(kRadixBins - 1) << shift;
  s.remaining -= above;
  state[row] = s;
}

// Per block (row, part): how many keys of its slice are above the threshold (low 32 bits) and equal to it (high).
template <typename Bits>
__global__ void __launch_bounds__(kSelectThreads)
    multi_count_kernel(const Bits* __restrict__ x, int64_t n, int64_t blocks_per_row, int64_t slice,
                       KeyCodec<Bits> codec, const SelectState* __restrict__ state,
                       unsigned long long* __restrict__ counts) {
  using BlockReduce = cub::BlockReduce<unsigned long long, kSelectThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int64_t row = blockIdx.x / blocks_per_row, part = blockIdx.x % blocks_per_row;
  const int64_t begin = part * slice, end = begin + slice < n ? begin + slice : n;
  const Bits threshold = Bits(state[row].prefix);
  const Bits* in = x + row * n;
  unsigned long long packed = 0;  // slice < 2^32: neither half overflows
  for (int64_t base = begin; base < end; base += kTile) {
    Bits keys[kLoadItems];
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      keys[j] = i < end ? codec.encode(in[i]) : Bits(0);
    }
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      if (i < end) packed += keys[j] > threshold ? 1ull : (keys[j] == threshold ? (1ull << 32) : 0ull);
    }
  }
  const unsigned long long total = BlockReduce(temp).Sum(packed);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

template <typename Bits>
__global__ void __launch_bounds__(kSelectThreads)
    multi_gather_kernel(const Bits* __restrict__ x, int64_t n, int64_t k, int64_t blocks_per_row, int64_t slice,
                        KeyCodec<Bits> codec, const SelectState* __restrict__ state,
                        const unsigned long long* __restrict__ counts, Bits* __restrict__ values,
                        int64_t* __restrict__ indices) {
  using BlockScan = cub::BlockScan<uint32_t, kSelectThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  __shared__ unsigned long long bases[2];
  const int64_t row = blockIdx.x / blocks_per_row, part = blockIdx.x % blocks_per_row;
  const int64_t begin = part * slice, end = begin + slice < n ? begin + slice : n;
  if (threadIdx.x == 0) {  // the slices before this one, in position order
    unsigned long long above = 0, equal = 0;
    for (int64_t p = 0; p < part; ++p) {
      const unsigned long long packed = counts[row * blocks_per_row + p];
      above += packed & 0xFFFFFFFFull;
      equal += packed >> 32;
    }
    bases[0] = above;
    bases[1] = equal;
  }
  __syncthreads();
  const Bits threshold = Bits(state[row].prefix);
  const unsigned long long take_equal = state[row].remaining;
  const unsigned long long num_above = static_cast<unsigned long long>(k) - take_equal;
  const Bits* in = x + row * n;
  Bits* row_values = values + row * k;
  int64_t* row_indices = indices + row * k;
  scan_in_order(
      in, begin, end, codec, temp, bases[0], num_above, bases[1], take_equal,
      [&](Bits key) { return key > threshold ? 1u : (key == threshold ? (1u << 16) : 0u); },
      [&](int64_t i, Bits, bool above, unsigned long long rank) {
        if (above) {
          row_values[rank] = in[i];
          row_indices[rank] = i;
        } else if (rank < take_equal) {
          row_values[num_above + rank] = in[i];
          row_indices[num_above + rank] = i;
        }
      });
}

// One block per row: the gathered k (k <= kSelectThreads * kSortItems) put in final order.
template <typename Bits, int kSortItems>
__global__ void __launch_bounds__(kSelectThreads)
    sort_selected_kernel(const Bits* __restrict__ x, int64_t n, int64_t k, KeyCodec<Bits> codec,
                         Bits* __restrict__ values, int64_t* __restrict__ indices) {
  using BlockSort = cub::BlockRadixSort<Bits, kSelectThreads, kSortItems, int64_t>;
  __shared__ typename BlockSort::TempStorage temp;
  const int64_t row = blockIdx.x;
  sort_selected<Bits, kSortItems>(x + row * n, k, codec, values + row * k, indices + row * k, temp);
}

// ---- k = 1: an argmax (argmin) under the same total order, reading the row once. One block per
// row, or for few long rows several blocks per row and a second small kernel over their winners.
template <typename Bits>
struct Best {
  WideKey<Bits> key;
  int64_t position;  // kNoBest: no element yet (loses to every element)
};
constexpr int64_t kNoBest = INT64_MAX;

struct BestOf {
  template <typename T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    return (a.key > b.key || (a.key == b.key && a.position < b.position)) ? a : b;
  }
};

// The best element of positions [begin, end) of a row, reduced over the block (valid in thread 0).
template <typename Bits>
__device__ __forceinline__ Best<Bits> block_best(
    const Bits* __restrict__ in, int64_t begin, int64_t end, KeyCodec<Bits> codec,
    typename cub::BlockReduce<Best<Bits>, kSelectThreads>::TempStorage& temp) {
  Best<Bits> best{0, kNoBest};
  for (int64_t base = begin; base < end; base += kTile) {
    WideKey<Bits> keys[kLoadItems];
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      keys[j] = i < end ? WideKey<Bits>(codec.encode(in[i])) : WideKey<Bits>(0);
    }
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {  // this thread's positions increase: ties keep the first
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      if (i < end && (best.position == kNoBest || keys[j] > best.key)) best = Best<Bits>{keys[j], i};
    }
  }
  return cub::BlockReduce<Best<Bits>, kSelectThreads>(temp).Reduce(best, BestOf());
}

template <typename Bits>
__global__ void __launch_bounds__(kSelectThreads)
    argbest_rows_kernel(const Bits* __restrict__ x, int64_t rows, int64_t n, KeyCodec<Bits> codec,
                        Bits* __restrict__ values, int64_t* __restrict__ indices) {
  __shared__ typename cub::BlockReduce<Best<Bits>, kSelectThreads>::TempStorage temp;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform across the block
    const Bits* in = x + row * n;
    const Best<Bits> best = block_best(in, 0, n, codec, temp);
    if (threadIdx.x == 0) {
      values[row] = in[best.position];
      indices[row] = best.position;
    }
    __syncthreads();  // temp is reused
  }
}

template <typename Bits>
__global__ void __launch_bounds__(kSelectThreads)
    argbest_partial_kernel(const Bits* __restrict__ x, int64_t n, int64_t blocks_per_row, int64_t slice,
                           KeyCodec<Bits> codec, Best<Bits>* __restrict__ partial) {
  __shared__ typename cub::BlockReduce<Best<Bits>, kSelectThreads>::TempStorage temp;
  const int64_t row = blockIdx.x / blocks_per_row, part = blockIdx.x % blocks_per_row;
  const int64_t begin = part * slice, end = begin + slice < n ? begin + slice : n;
  const Best<Bits> best = block_best(x + row * n, begin, end, codec, temp);
  if (threadIdx.x == 0) partial[blockIdx.x] = best;
}

// One thread per row: the best of its blocks' winners (a total order: any order of combining agrees).
template <typename Bits>
__global__ void argbest_final_kernel(const Bits* __restrict__ x, int64_t rows, int64_t n, int64_t blocks_per_row,
                                     const Best<Bits>* __restrict__ partial, Bits* __restrict__ values,
                                     int64_t* __restrict__ indices) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  Best<Bits> best = partial[row * blocks_per_row];
  for (int64_t p = 1; p < blocks_per_row; ++p) best = BestOf()(best, partial[row * blocks_per_row + p]);
  const int64_t position = best.position < n ? best.position : 0;  // always < n (every slice is non-empty)
  values[row] = x[row * n + position];
  indices[row] = position;
}

unsigned grid_for(int64_t blocks_needed, int blocks_per_sm) {
  const int64_t limit = int64_t(current_device_info().sm_count) * blocks_per_sm;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks_needed, 1, limit));
}

template <typename Bits, int kItems>
void launch_warp_topk(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                      int64_t* indices, cudaStream_t stream) {
  const unsigned grid = grid_for((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock, 32);
  warp_topk_kernel<Bits, kItems>
      <<<grid, kWarp * kWarpRowsPerBlock, 0, stream>>>(x, rows, int(n), int(k), codec, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Bits, int kSortItems, bool kSortInBlock>
void launch_radix_topk(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                       int64_t* indices, cudaStream_t stream) {
  const unsigned grid = grid_for(rows, 8);
  radix_topk_kernel<Bits, kSortItems, kSortInBlock>
      <<<grid, kSelectThreads, 0, stream>>>(x, rows, n, k, codec, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// Several blocks per row: (blocks per row, positions per block), about kMultiBlocksPerSm blocks per
// SM in all, each slice a multiple of the block size, >= kMultiMinSlice and < 2^32 positions.
std::pair<int64_t, int64_t> multi_block_slices(int64_t rows, int64_t n) {
  const int64_t target_blocks = int64_t(current_device_info().sm_count) * kMultiBlocksPerSm;
  int64_t blocks_per_row = std::max<int64_t>(1, (target_blocks + rows - 1) / rows);
  blocks_per_row = std::min(blocks_per_row, std::max<int64_t>(1, n / kMultiMinSlice));
  int64_t slice = (n + blocks_per_row - 1) / blocks_per_row;
  slice = std::min((slice + kSelectThreads - 1) / kSelectThreads * kSelectThreads, kMultiMaxSlice);
  return {(n + slice - 1) / slice, slice};
}

// k = 1.
template <typename Bits>
void argbest(const Bits* in, int64_t rows, int64_t n, KeyCodec<Bits> codec, Bits* out, int64_t* indices,
             bool multi_block, Workspace& workspace, cudaStream_t stream) {
  if (!multi_block) {
    argbest_rows_kernel<Bits><<<grid_for(rows, 8), kSelectThreads, 0, stream>>>(in, rows, n, codec, out, indices);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const auto [blocks_per_row, slice] = multi_block_slices(rows, n);
  auto* partial = static_cast<Best<Bits>*>(workspace.allocate(size_t(rows * blocks_per_row) * sizeof(Best<Bits>)));
  argbest_partial_kernel<Bits><<<static_cast<unsigned>(rows * blocks_per_row), kSelectThreads, 0, stream>>>(
      in, n, blocks_per_row, slice, codec, partial);
  GPUPRIM_LAUNCH_CHECK();
  argbest_final_kernel<Bits><<<static_cast<unsigned>((rows + 255) / 256), 256, 0, stream>>>(in, rows, n, blocks_per_row,
                                                                                            partial, out, indices);
  GPUPRIM_LAUNCH_CHECK();
}

// Few long rows: the multi-block path (see above). Temp memory: O(rows * 256) counters plus one
// word per block.
template <typename Bits>
bool multi_block_topk(const Bits* in, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* out,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  constexpr int kKeyBits = int(sizeof(Bits) * 8);
  const auto [blocks_per_row, slice] = multi_block_slices(rows, n);
  const int64_t blocks = rows * blocks_per_row;
  auto* state = static_cast<SelectState*>(workspace.allocate(size_t(rows) * sizeof(SelectState)));
  const size_t histogram_bytes = size_t(rows) * kRadixBins * sizeof(unsigned long long);
  auto* histograms = static_cast<unsigned long long*>(workspace.allocate(histogram_bytes));
  auto* counts = static_cast<unsigned long long*>(workspace.allocate(size_t(blocks) * sizeof(unsigned long long)));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(histograms, 0, histogram_bytes, stream));
  const unsigned row_grid = static_cast<unsigned>((rows + 255) / 256);
  const unsigned grid = static_cast<unsigned>(blocks);
  multi_init_kernel<<<row_grid, 256, 0, stream>>>(rows, k, state);
  GPUPRIM_LAUNCH_CHECK();
  for (int shift = kKeyBits - kRadixBits; shift >= 0; shift -= kRadixBits) {
    multi_histogram_kernel<Bits>
        <<<grid, kSelectThreads, 0, stream>>>(in, n, blocks_per_row, slice, codec, shift, state, histograms);
    GPUPRIM_LAUNCH_CHECK();
    multi_choose_kernel<<<row_grid, 256, 0, stream>>>(rows, shift, state, histograms);
    GPUPRIM_LAUNCH_CHECK();
  }
  multi_count_kernel<Bits><<<grid, kSelectThreads, 0, stream>>>(in, n, blocks_per_row, slice, codec, state, counts);
  GPUPRIM_LAUNCH_CHECK();
  multi_gather_kernel<Bits>
      <<<grid, kSelectThreads, 0, stream>>>(in, n, k, blocks_per_row, slice, codec, state, counts, out, indices);
  GPUPRIM_LAUNCH_CHECK();
  const unsigned sort_grid = static_cast<unsigned>(rows);
  if (k <= kSelectThreads) {
    sort_selected_kernel<Bits, 1><<<sort_grid, kSelectThreads, 0, stream>>>(in, n, k, codec, out, indices);
  } else if (k <= 2 * kSelectThreads) {
    sort_selected_kernel<Bits, 2><<<sort_grid, kSelectThreads, 0, stream>>>(in, n, k, codec, out, indices);
  } else if (k <= kTopkBlockSortMax) {
    sort_selected_kernel<Bits, 4><<<sort_grid, kSelectThreads, 0, stream>>>(in, n, k, codec, out, indices);
  } else {
    return false;  // the glue sorts
  }
  GPUPRIM_LAUNCH_CHECK();
  return true;
}

template <typename Bits>
bool topk_typed(const void* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, int64_t k, void* values,
                int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  const auto* in = static_cast<const Bits*>(x);
  auto* out = static_cast<Bits*>(values);
  if (n <= int64_t(kWarp) * kWarpMaxItems && k <= kWarpMaxK) {
    if constexpr (sizeof(Bits) <= 4) {  // G lanes per row (topk_short_rows.cuh); 8-byte keys below
      short_rows::topk_short_rows<Bits>(in, rows, n, k, codec, out, indices, current_device_info().sm_count, stream);
      GPUPRIM_LAUNCH_CHECK();
      return true;
    }
    if (n <= 1 * kWarp) {
      launch_warp_topk<Bits, 1>(in, rows, n, k, codec, out, indices, stream);
    } else if (n <= 2 * kWarp) {
      launch_warp_topk<Bits, 2>(in, rows, n, k, codec, out, indices, stream);
    } else if (n <= 4 * kWarp) {
      launch_warp_topk<Bits, 4>(in, rows, n, k, codec, out, indices, stream);
    } else if (n <= 8 * kWarp) {
      launch_warp_topk<Bits, 8>(in, rows, n, k, codec, out, indices, stream);
    } else {
      launch_warp_topk<Bits, 16>(in, rows, n, k, codec, out, indices, stream);
    }
    return true;
  }
  if constexpr (sizeof(Bits) == 2 || sizeof(Bits) == 4) {  // one read of the row (topk_filter_cuda.cu)
    if (filter_topk_applies(n, k, sizeof(Bits))) {
      filter_topk(in, rows, n, k, codec, out, indices, workspace, stream);
      return true;
    }
  }
  const bool multi_block = n >= kMultiMinRow && rows * kMultiMaxRowsPerSm <= current_device_info().sm_count;
  if (k == 1) {
    argbest<Bits>(in, rows, n, codec, out, indices, multi_block, workspace, stream);
    return true;
  }
  if (multi_block) return multi_block_topk<Bits>(in, rows, n, k, codec, out, indices, workspace, stream);
  if (k <= kSelectThreads) {
    launch_radix_topk<Bits, 1, true>(in, rows, n, k, codec, out, indices, stream);
  } else if (k <= 2 * kSelectThreads) {
    launch_radix_topk<Bits, 2, true>(in, rows, n, k, codec, out, indices, stream);
  } else if (k <= kTopkBlockSortMax) {
    static_assert(kTopkBlockSortMax == 4 * kSelectThreads, "the largest in-block sort tile");
    launch_radix_topk<Bits, 4, true>(in, rows, n, k, codec, out, indices, stream);
  } else {
    launch_radix_topk<Bits, 1, false>(in, rows, n, k, codec, out, indices, stream);
    return false;
  }
  return true;
}

}  // namespace

bool topk_cuda_launch(const void* x, DType type, int64_t rows, int64_t n, int64_t k, bool largest, void* values,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  // Ascending keys when largest (larger key = larger value), inverted keys otherwise.
  return dispatch<AllTypes>("topk", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return topk_typed<KeyBits<T>>(x, key_codec<T>(/*descending=*/!largest), rows, n, k, values, indices, workspace,
                                  stream);
  });
}

}  // namespace gpuprim
