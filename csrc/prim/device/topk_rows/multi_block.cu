// The row top-k for few long rows: several blocks per row (about Tuning::kMultiBlocksPerSm an SM in all), the
// radix select of radix_select.cu cut into launches at each step that needs the whole row's counts: per digit a
// histogram kernel (shared-memory counts added to the row's global histogram with integer atomics: exact) and a
// choose kernel; then a count kernel (keys above / equal to the threshold per slice) and a gather kernel (each
// block offsets its writes by the counts of the slices before it, so the order is still position order); then,
// for k <= Tuning::kBlockSortMax, the block sort. Reads the row 6 times (4 digits, count, gather). Temp memory:
// O(rows * 256) counters plus one word per block.
#include "prim/device/topk_rows/row_select.cuh"
#include "prim/device/topk_rows/topk_rows.h"
#include "prim/util/cuda_check.h"

namespace gpuprim {
namespace topk_rows {
namespace {

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
  const BlockSlice my = block_slice(n, blocks_per_row, slice);
  for (int bin = threadIdx.x; bin < kRadixBins; bin += kSelectThreads) histogram[bin] = 0;
  __syncthreads();
  const Bits prefix = Bits(state[my.row].prefix), mask = Bits(state[my.row].mask);
  const Bits* in = x + my.row * n;
  count_digits(in, my.begin, my.end, codec, prefix, mask, shift, histogram, nullptr, false);
  __syncthreads();
  for (int bin = threadIdx.x; bin < kRadixBins; bin += kSelectThreads) {
    if (histogram[bin] != 0) atomicAdd(&histograms[my.row * kRadixBins + bin], (unsigned long long)histogram[bin]);
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
  const BlockSlice my = block_slice(n, blocks_per_row, slice);
  const Bits threshold = Bits(state[my.row].prefix);
  const Bits* in = x + my.row * n;
  unsigned long long packed = 0;  // slice < 2^32: neither half overflows
  for (int64_t base = my.begin; base < my.end; base += kTile) {
    Bits keys[kLoadItems];
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {  // load_tile_keys' loads, written out: its PTX took 2 registers more
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      keys[j] = i < my.end ? codec.encode(in[i]) : Bits(0);
    }
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {
      const int64_t i = base + int64_t(j) * kSelectThreads + threadIdx.x;
      if (i < my.end) packed += keys[j] > threshold ? 1ull : (keys[j] == threshold ? (1ull << 32) : 0ull);
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
  const BlockSlice my = block_slice(n, blocks_per_row, slice);
  if (threadIdx.x == 0) {  // the slices before this one, in position order
    unsigned long long above = 0, equal = 0;
    for (int64_t p = 0; p < my.part; ++p) {
      const unsigned long long packed = counts[my.row * blocks_per_row + p];
      above += packed & 0xFFFFFFFFull;
      equal += packed >> 32;
    }
    bases[0] = above;
    bases[1] = equal;
  }
  __syncthreads();
  const Bits threshold = Bits(state[my.row].prefix);
  const unsigned long long take_equal = state[my.row].remaining;
  const unsigned long long num_above = static_cast<unsigned long long>(k) - take_equal;
  gather_selected(x + my.row * n, my.begin, my.end, codec, threshold, bases[0], bases[1], num_above, take_equal, temp,
                  values + my.row * k, indices + my.row * k);
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

}  // namespace

template <typename Bits>
void multi_block_select(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                        int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  constexpr int kKeyBits = int(sizeof(Bits) * 8);
  const auto [blocks_per_row, slice] = multi_block_slices(rows, n);
  const int64_t blocks = rows * blocks_per_row;
  auto* state = static_cast<SelectState*>(workspace.allocate(size_t(rows) * sizeof(SelectState)));
  const size_t histogram_bytes = size_t(rows) * kRadixBins * sizeof(unsigned long long);
  auto* histograms = static_cast<unsigned long long*>(workspace.allocate(histogram_bytes));
  auto* counts = static_cast<unsigned long long*>(workspace.allocate(size_t(blocks) * sizeof(unsigned long long)));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(histograms, 0, histogram_bytes, stream));
  const unsigned row_grid = grid_for(rows, kBlockThreads);  // a thread per row
  const unsigned grid = static_cast<unsigned>(blocks);
  multi_init_kernel<<<row_grid, kBlockThreads, 0, stream>>>(rows, k, state);
  GPUPRIM_LAUNCH_CHECK();
  for (int shift = kKeyBits - kRadixBits; shift >= 0; shift -= kRadixBits) {
    multi_histogram_kernel<Bits>
        <<<grid, kSelectThreads, 0, stream>>>(x, n, blocks_per_row, slice, codec, shift, state, histograms);
    GPUPRIM_LAUNCH_CHECK();
    multi_choose_kernel<<<row_grid, kBlockThreads, 0, stream>>>(rows, shift, state, histograms);
    GPUPRIM_LAUNCH_CHECK();
  }
  multi_count_kernel<Bits><<<grid, kSelectThreads, 0, stream>>>(x, n, blocks_per_row, slice, codec, state, counts);
  GPUPRIM_LAUNCH_CHECK();
  multi_gather_kernel<Bits>
      <<<grid, kSelectThreads, 0, stream>>>(x, n, k, blocks_per_row, slice, codec, state, counts, values, indices);
  GPUPRIM_LAUNCH_CHECK();
  if (k > Tuning::kBlockSortMax) return;  // left in selection order
  with_sort_items(k, [&](auto items) {
    sort_selected_kernel<Bits, decltype(items)::value>
        <<<static_cast<unsigned>(rows), kSelectThreads, 0, stream>>>(x, n, k, codec, values, indices);
  });
  GPUPRIM_LAUNCH_CHECK();
}

#define GPUPRIM_INSTANTIATE_MULTI_BLOCK_SELECT(BITS)                                                          \
  template void multi_block_select<BITS>(const BITS*, int64_t, int64_t, int64_t, KeyCodec<BITS>, BITS*, int64_t*, \
                                         Workspace&, cudaStream_t);
GPUPRIM_INSTANTIATE_MULTI_BLOCK_SELECT(uint8_t)
GPUPRIM_INSTANTIATE_MULTI_BLOCK_SELECT(uint16_t)
GPUPRIM_INSTANTIATE_MULTI_BLOCK_SELECT(uint32_t)
GPUPRIM_INSTANTIATE_MULTI_BLOCK_SELECT(uint64_t)

}  // namespace topk_rows
}  // namespace gpuprim
