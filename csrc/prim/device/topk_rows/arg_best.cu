// The row top-k for k = 1: an argmax (argmin when the codec inverts) under the codec's total order, reading
// the row once. One block per row, or for few long rows several blocks per row and a second small kernel over
// their winners.
#include "prim/device/topk_rows/row_select.cuh"
#include "prim/device/topk_rows/topk_rows.h"
#include "prim/util/cuda_check.h"

namespace gpuprim {
namespace topk_rows {
namespace {

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
    load_tile_keys<false>(in, base, end, codec, keys);
#pragma unroll
    for (int j = 0; j < kLoadItems; ++j) {  // this thread's positions increase: ties keep the first
      const int64_t i = tile_position<false>(base, j);
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
  const BlockSlice my = block_slice(n, blocks_per_row, slice);
  const Best<Bits> best = block_best(x + my.row * n, my.begin, my.end, codec, temp);
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

}  // namespace

template <typename Bits>
void arg_best(const Bits* x, int64_t rows, int64_t n, KeyCodec<Bits> codec, Bits* values, int64_t* indices,
              Workspace& workspace, cudaStream_t stream) {
  if (!multi_block_applies(rows, n)) {
    const unsigned grid = grid_for(rows, 1, int64_t(current_device_info().sm_count) * Tuning::kSelectBlocksPerSm);
    argbest_rows_kernel<Bits><<<grid, kSelectThreads, 0, stream>>>(x, rows, n, codec, values, indices);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const auto [blocks_per_row, slice] = multi_block_slices(rows, n);
  auto* partial = static_cast<Best<Bits>*>(workspace.allocate(size_t(rows * blocks_per_row) * sizeof(Best<Bits>)));
  argbest_partial_kernel<Bits><<<static_cast<unsigned>(rows * blocks_per_row), kSelectThreads, 0, stream>>>(
      x, n, blocks_per_row, slice, codec, partial);
  GPUPRIM_LAUNCH_CHECK();
  argbest_final_kernel<Bits><<<grid_for(rows, kBlockThreads), kBlockThreads, 0, stream>>>(x, rows, n, blocks_per_row,
                                                                                          partial, values, indices);
  GPUPRIM_LAUNCH_CHECK();
}

#define GPUPRIM_INSTANTIATE_ARG_BEST(BITS)                                                             \
  template void arg_best<BITS>(const BITS*, int64_t, int64_t, KeyCodec<BITS>, BITS*, int64_t*, Workspace&, \
                               cudaStream_t);
GPUPRIM_INSTANTIATE_ARG_BEST(uint8_t)
GPUPRIM_INSTANTIATE_ARG_BEST(uint16_t)
GPUPRIM_INSTANTIATE_ARG_BEST(uint32_t)
GPUPRIM_INSTANTIATE_ARG_BEST(uint64_t)

}  // namespace topk_rows
}  // namespace gpuprim
