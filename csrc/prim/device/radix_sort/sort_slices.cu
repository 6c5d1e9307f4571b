// sort_slices (sort_slices.h): per group of columns (last group first), one pass gathering each row's packed
// column keys in the current order, then prim's stable sort_pairs of (key, row). A stable sort by a group keeps
// the order of the groups after it among equal keys, so after the first group the rows are in lexicographic order.
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/radix_sort/sort_slices.h"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace radix_sort {
namespace {

// keys[j] = the codec keys of columns [begin, begin + columns) of the j-th row so far (row j before the first
// sort), earlier columns in higher bits; rows_out[j] = that row. rows_in may be rows_out (each j reads its own).
template <typename Bits>
__global__ void gather_keys_kernel(const Bits* __restrict__ rows, KeyCodec<Bits> codec, int64_t m, int64_t width,
                                   int64_t begin, int columns, const int64_t* rows_in, uint64_t* __restrict__ keys,
                                   int64_t* rows_out) {
  constexpr int kBits = int(sizeof(Bits) * 8);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += stride) {
    const int64_t row = rows_in != nullptr ? rows_in[j] : j;
    const Bits* slice = rows + row * width + begin;
    uint64_t key = 0;
    for (int c = 0; c < columns; ++c) {
      if constexpr (kBits < 64) key <<= kBits;  // 8-byte elements: one column a key (a 64-bit shift is undefined)
      key |= uint64_t(codec.encode(slice[c]));
    }
    keys[j] = key;
    rows_out[j] = row;
  }
}

}  // namespace

template <typename Bits>
void sort_slices(const Bits* rows, KeyCodec<Bits> codec, int64_t m, int64_t width, int64_t* order, Workspace& workspace,
                 cudaStream_t stream) {
  if (m <= 0) return;
  constexpr int64_t kColumnsPerKey = int64_t(8 / sizeof(Bits));
  auto* key_scratch = static_cast<uint64_t*>(workspace.allocate(sizeof(uint64_t) * size_t(2 * m)));
  auto* row_scratch = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(m)));
  uint64_t* keys[2] = {key_scratch, key_scratch + m};
  int64_t* sorted_rows[2] = {order, row_scratch};
  const int64_t groups = (width + kColumnsPerKey - 1) / kColumnsPerKey;
  const int64_t* current = nullptr;  // the identity before the first sort
  for (int64_t g = groups - 1; g >= 0; --g) {
    const int64_t begin = g * kColumnsPerKey;
    const int columns = int(std::min<int64_t>(kColumnsPerKey, width - begin));
    gather_keys_kernel<Bits><<<grid_for(m, kBlockThreads), kBlockThreads, 0, stream>>>(
        rows, codec, m, width, begin, columns, current, keys[0], sorted_rows[0]);
    GPUPRIM_LAUNCH_CHECK();
    const int selector =
        sort_pairs<uint64_t, int64_t>(keys, sorted_rows, m, columns * int(sizeof(Bits) * 8), workspace, stream);
    current = sorted_rows[selector];
  }
  if (current == nullptr) {  // no columns: every row equal, the identity order
    gather_keys_kernel<Bits><<<grid_for(m, kBlockThreads), kBlockThreads, 0, stream>>>(rows, codec, m, width, 0, 0,
                                                                                       nullptr, keys[0], order);
    GPUPRIM_LAUNCH_CHECK();
  } else if (current != order) {
    GPUPRIM_CUDA_CHECK(cudaMemcpyAsync(order, current, sizeof(int64_t) * size_t(m), cudaMemcpyDeviceToDevice, stream));
  }
}

#define GPUPRIM_INSTANTIATE_SORT_SLICES(BITS) \
  template void sort_slices<BITS>(const BITS*, KeyCodec<BITS>, int64_t, int64_t, int64_t*, Workspace&, cudaStream_t);
GPUPRIM_INSTANTIATE_SORT_SLICES(uint8_t)
GPUPRIM_INSTANTIATE_SORT_SLICES(uint16_t)
GPUPRIM_INSTANTIATE_SORT_SLICES(uint32_t)
GPUPRIM_INSTANTIATE_SORT_SLICES(uint64_t)

}  // namespace radix_sort
}  // namespace gpuprim
