// The row top-k's radix select, one block per row: the k-th key found digit by digit (8-bit digits, most
// significant first, a shared-memory histogram of the keys still matching the chosen prefix), then one pass
// in position order (block-wide scans) gathers the keys above it and the first (lowest position) keys equal
// to it, then, for k <= Tuning::kBlockSortMax, a block radix sort of those k (stable, so ties stay in position
// order) puts them in final order. When a digit's bin is small enough, its keys move to shared memory (2 or 3
// row reads, else 4 digit passes and a gather: 5 for fp32).
#include "prim/device/topk_rows/row_select.cuh"
#include "prim/device/topk_rows/topk_rows.h"
#include "prim/util/cuda_check.h"

namespace gpuprim {
namespace topk_rows {
namespace {

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
template <typename Bits>
constexpr int candidate_capacity() {
  return Tuning::kCandidateBytes / int(sizeof(Bits) + sizeof(uint32_t));
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
              write_selected(in, i, true, rank, 0ull, 0ull, row_values, row_indices);
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
          flags = threshold_flag(temp.select.keys[c], threshold);
        }
        uint32_t rank, total;
        BlockScan(temp.select.scan).ExclusiveSum(flags, rank, total);
        if (flags == 1u) {
          write_selected(in, temp.select.positions[c], true, above_base + (rank & 0xFFFFu), num_above, take_equal,
                         row_values, row_indices);
        } else if (flags != 0u) {
          write_selected(in, temp.select.positions[c], false, equal_base + (rank >> 16), num_above, take_equal,
                         row_values, row_indices);
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
      gather_selected(in, 0, n, codec, threshold, 0ull, 0ull, num_above, take_equal, temp.select.scan, row_values,
                      row_indices);
    }

    // 4. Final order (sort_selected).
    if constexpr (kSortInBlock) {
      __syncthreads();  // the gathered results (global memory) are visible to the whole block
      sort_selected<Bits, kSortItems>(in, k, codec, row_values, row_indices, temp.sort);
    }
    __syncthreads();  // the next row reuses shared memory
  }
}

}  // namespace

template <typename Bits>
void radix_select(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                  int64_t* indices, cudaStream_t stream) {
  const unsigned grid = grid_for(rows, 1, int64_t(current_device_info().sm_count) * Tuning::kSelectBlocksPerSm);
  if (k <= Tuning::kBlockSortMax) {
    with_sort_items(k, [&](auto items) {
      radix_topk_kernel<Bits, decltype(items)::value, true>
          <<<grid, kSelectThreads, 0, stream>>>(x, rows, n, k, codec, values, indices);
    });
  } else {
    radix_topk_kernel<Bits, 1, false><<<grid, kSelectThreads, 0, stream>>>(x, rows, n, k, codec, values, indices);
  }
  GPUPRIM_LAUNCH_CHECK();
}

#define GPUPRIM_INSTANTIATE_RADIX_SELECT(BITS)                                                          \
  template void radix_select<BITS>(const BITS*, int64_t, int64_t, int64_t, KeyCodec<BITS>, BITS*, int64_t*, \
                                   cudaStream_t);
GPUPRIM_INSTANTIATE_RADIX_SELECT(uint8_t)
GPUPRIM_INSTANTIATE_RADIX_SELECT(uint16_t)
GPUPRIM_INSTANTIATE_RADIX_SELECT(uint32_t)
GPUPRIM_INSTANTIATE_RADIX_SELECT(uint64_t)

}  // namespace topk_rows
}  // namespace gpuprim
