// The pieces of a block's walk over a row shared by the radix-select paths of the row top-k (radix_select.cu,
// multi_block.cu, arg_best.cu): a tile of kSelectThreads x kLoadItems keys at a time, the digit histograms of a
// radix select, the in-order gather of the selected keys and the block sort that puts them in final order.
// Keys are the codec's (a larger key is the better element; among equal keys the lower position wins).
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "prim/device/topk_rows/tuning_topk_rows.h"
#include "prim/util/cub.cuh"
#include "prim/util/device_info.h"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"
#include "prim/util/launch.h"
#include "prim/warp/match.cuh"

namespace gpuprim {
namespace topk_rows {

constexpr int kSelectThreads = Tuning::kSelectThreads;
constexpr int kRadixBits = 8, kRadixBins = 1 << kRadixBits;  // a radix select's digits
// Passes over a row load kLoadItems elements per thread before using them (more loads in flight).
constexpr int kLoadItems = Tuning::kSelectLoadItems;
constexpr int kTile = kSelectThreads * kLoadItems;
constexpr int64_t kMultiMaxSlice = int64_t(1) << 30;  // a multi-block slice: < 2^32 positions (32-bit counts)

// Position of this thread's item j of the tile at `base`: striped (j * kSelectThreads + thread: coalesced
// loads) or blocked (thread * kLoadItems + j: a thread's items in a row, so a block scan runs in position order).
template <bool kBlocked>
__device__ __forceinline__ int64_t tile_position(int64_t base, int j) {
  if constexpr (kBlocked) {
    return base + int64_t(threadIdx.x) * kLoadItems + j;
  } else {
    return base + int64_t(j) * kSelectThreads + threadIdx.x;
  }
}

// This thread's keys of the tile at `base` (Key(0) at positions >= end), all loads issued before any use.
template <bool kBlocked, typename Key, typename Bits>
__device__ __forceinline__ void load_tile_keys(const Bits* __restrict__ in, int64_t base, int64_t end,
                                               KeyCodec<Bits> codec, Key (&keys)[kLoadItems]) {
#pragma unroll
  for (int j = 0; j < kLoadItems; ++j) {
    const int64_t i = tile_position<kBlocked>(base, j);
    keys[j] = i < end ? Key(codec.encode(in[i])) : Key(0);
  }
}

// Adds one to each calling lane's bin (bin < 0: nothing), one shared-memory atomic per distinct
// bin of the warp: the digit passes over a whole row hit few hot bins (e.g. the top digit of
// similar floats), where per-element atomics on one address would serialize. Every lane of the
// warp must call it (the callers loop uniformly over the block).
__device__ __forceinline__ void add_to_histogram(int bin, uint32_t* histogram, unsigned long long* wide_histogram,
                                                 bool wide_counts) {
  const unsigned peers = warp::match_any(bin);
  if (bin >= 0 && warp::is_leader(peers)) {
    if (wide_counts) {
      atomicAdd(&wide_histogram[bin], static_cast<unsigned long long>(__popc(peers)));
    } else {
      atomicAdd(&histogram[bin], static_cast<uint32_t>(__popc(peers)));
    }
  }
}

// Counts, by the digit at `shift`, the keys of positions [begin, end) that match `prefix` on `mask`.
// Block-uniform loop (every lane reaches add_to_histogram's match).
template <typename Bits>
__device__ __forceinline__ void count_digits(const Bits* __restrict__ in, int64_t begin, int64_t end,
                                             KeyCodec<Bits> codec, Bits prefix, Bits mask, int shift,
                                             uint32_t* histogram, unsigned long long* wide_histogram,
                                             bool wide_counts) {
  for (int64_t base = begin; base < end; base += kTile) {
    Bits keys[kLoadItems];
    load_tile_keys<false>(in, base, end, codec, keys);
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const bool counted = tile_position<false>(base, j) < end && Bits(keys[j] & mask) == prefix;
      add_to_histogram(counted ? int((keys[j] >> shift) & (kRadixBins - 1)) : -1, histogram, wide_histogram,
                       wide_counts);
    }
  }
}

// Walks positions [begin, end) in order, a tile at a time (the blocked arrangement, so the scan order is
// position order). classify(key) gives 1 (first group), 1 << 16 (second group) or 0; emit(position, key,
// first_group, rank) gets each classified element with its rank in its group (counting from first_base /
// second_base). Stops once both groups reached their targets. Block-uniform; ends with a barrier after each tile.
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
    load_tile_keys<true>(in, base, end, codec, keys);
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) flags[j] = tile_position<true>(base, j) < end ? classify(keys[j]) : 0u;
    uint32_t total;  // per tile at most kTile (< 2^16) in each half
    cub::BlockScan<uint32_t, kSelectThreads>(temp).ExclusiveSum(flags, ranks, total);
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = tile_position<true>(base, j);
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

// A key's scan flag against the k-th key: 1 above it, 1 << 16 equal to it (both counts in one scanned word).
template <typename Bits>
__device__ __forceinline__ uint32_t threshold_flag(Bits key, Bits threshold) {
  return key > threshold ? 1u : (key == threshold ? (1u << 16) : 0u);
}

// Element `position` of the row as a selected one: the rank-th of those above the k-th key, or the rank-th of
// those equal to it (kept among the first take_equal, after the num_above above ones).
template <typename Bits>
__device__ __forceinline__ void write_selected(const Bits* __restrict__ in, int64_t position, bool above,
                                               unsigned long long rank, unsigned long long num_above,
                                               unsigned long long take_equal, Bits* __restrict__ row_values,
                                               int64_t* __restrict__ row_indices) {
  if (above) {
    row_values[rank] = in[position];
    row_indices[rank] = position;
  } else if (rank < take_equal) {
    row_values[num_above + rank] = in[position];
    row_indices[num_above + rank] = position;
  }
}

// The gather of positions [begin, end) of a row in position order (block-wide scans): every key above the k-th
// key `threshold`, then the first take_equal equal to it; above_base / equal_base such keys come before begin.
template <typename Bits>
__device__ __forceinline__ void gather_selected(const Bits* __restrict__ in, int64_t begin, int64_t end,
                                                KeyCodec<Bits> codec, Bits threshold, unsigned long long above_base,
                                                unsigned long long equal_base, unsigned long long num_above,
                                                unsigned long long take_equal,
                                                typename cub::BlockScan<uint32_t, kSelectThreads>::TempStorage& temp,
                                                Bits* __restrict__ row_values, int64_t* __restrict__ row_indices) {
  scan_in_order(
      in, begin, end, codec, temp, above_base, num_above, equal_base, take_equal,
      [&](Bits key) { return threshold_flag(key, threshold); },
      [&](int64_t i, Bits, bool above, unsigned long long rank) {
        write_selected(in, i, above, rank, num_above, take_equal, row_values, row_indices);
      });
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

// Calls f(std::integral_constant<int, kSortItems>{}) with the block sort tile (1, 2 or 4 items a thread) that
// holds k <= Tuning::kBlockSortMax.
template <typename F>
void with_sort_items(int64_t k, F&& f) {
  static_assert(Tuning::kBlockSortMax == 4 * kSelectThreads, "the largest block sort tile");
  dispatch_pow2<1, 4>((k + kSelectThreads - 1) / kSelectThreads, f);
}

// The slice of its row that this block of a multi-block launch covers: block (row, part) takes positions
// [part * slice, min(n, (part + 1) * slice)) (slice < 2^32).
struct BlockSlice {
  int64_t row, part, begin, end;
};
__device__ __forceinline__ BlockSlice block_slice(int64_t n, int64_t blocks_per_row, int64_t slice) {
  const int64_t row = blockIdx.x / blocks_per_row, part = blockIdx.x % blocks_per_row;
  const int64_t begin = part * slice, end = begin + slice < n ? begin + slice : n;
  return {row, part, begin, end};
}

// Whether rows of n take several blocks each: few long rows (one block a row would leave SMs idle).
inline bool multi_block_applies(int64_t rows, int64_t n) {
  return n >= Tuning::kMultiMinRow && rows * Tuning::kMultiMaxRowsPerSm <= current_device_info().sm_count;
}

// Several blocks per row: (blocks per row, positions per block), about kMultiBlocksPerSm blocks per
// SM in all, each slice a multiple of the block size, >= kMultiMinSlice and < 2^32 positions.
inline std::pair<int64_t, int64_t> multi_block_slices(int64_t rows, int64_t n) {
  const int64_t target_blocks = int64_t(current_device_info().sm_count) * Tuning::kMultiBlocksPerSm;
  int64_t blocks_per_row = std::max<int64_t>(1, (target_blocks + rows - 1) / rows);
  blocks_per_row = std::min(blocks_per_row, std::max<int64_t>(1, n / Tuning::kMultiMinSlice));
  int64_t slice = (n + blocks_per_row - 1) / blocks_per_row;
  slice = std::min((slice + kSelectThreads - 1) / kSelectThreads * kSelectThreads, kMultiMaxSlice);
  return {(n + slice - 1) / slice, slice};
}

}  // namespace topk_rows
}  // namespace gpuprim
