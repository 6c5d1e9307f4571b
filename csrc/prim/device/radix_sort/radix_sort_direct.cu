// CUB DeviceRadixSort from input to output buffers (radix_sort.cuh's sort_pairs_direct and
// sort_keys_direct), compiled once for gpuprim::sort_pairs' direct path, sort_rows' int64 rows and
// gpuprim::sort_values' int32/int64 rows; in prim, so it is built whatever GPUPRIM_OPS selects, and a file
// of its own so that it compiles in parallel with radix_sort_pairs.cu.
#include <cstdint>
#include <limits>

#include "prim/util/cuda_check.h"
#include "prim/util/cub.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"

namespace gpuprim {
namespace radix_sort {

template <typename Key, typename Value, bool kDescending>
void sort_pairs_direct(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int64_t n,
                       int end_bit, Workspace& workspace, cudaStream_t stream) {
  const auto count = static_cast<int32_t>(n);  // 32-bit offsets inside CUB: its faster kernels
  const auto sort = [&](void* temp, size_t& temp_bytes) {
    if constexpr (kDescending) {
      return cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                       count, 0, end_bit, stream);
    } else {
      return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, count, 0,
                                             end_bit, stream);
    }
  };
  cub_call(workspace, sort);
}

template <typename Key, bool kDescending, typename Count>
void sort_keys_counted(const Key* keys_in, Key* keys_out, Count count, Workspace& workspace, cudaStream_t stream) {
  const auto sort = [&](void* temp, size_t& temp_bytes) {
    if constexpr (kDescending) {
      return cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, keys_in, keys_out, count, 0,
                                                      int(sizeof(Key) * 8), stream);
    } else {
      return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, count, 0, int(sizeof(Key) * 8),
                                            stream);
    }
  };
  cub_call(workspace, sort);
}

template <typename Key, bool kDescending>
void sort_keys_direct(const Key* keys_in, Key* keys_out, int64_t n, Workspace& workspace, cudaStream_t stream) {
  if (n <= std::numeric_limits<int32_t>::max()) {  // 32-bit offsets inside CUB: its faster kernels
    sort_keys_counted<Key, kDescending>(keys_in, keys_out, static_cast<int32_t>(n), workspace, stream);
  } else {  // CUB's 64-bit offsets: a third of the memory of sorting (key, position) pairs
    sort_keys_counted<Key, kDescending>(keys_in, keys_out, n, workspace, stream);
  }
}

template void sort_keys_direct<int32_t, false>(const int32_t*, int32_t*, int64_t, Workspace&, cudaStream_t);
template void sort_keys_direct<int32_t, true>(const int32_t*, int32_t*, int64_t, Workspace&, cudaStream_t);
template void sort_keys_direct<int64_t, false>(const int64_t*, int64_t*, int64_t, Workspace&, cudaStream_t);
template void sort_keys_direct<int64_t, true>(const int64_t*, int64_t*, int64_t, Workspace&, cudaStream_t);

#define GPUPRIM_INSTANTIATE_SORT_PAIRS_DIRECT(KEY, VALUE, DESCENDING)                                         \
  template void sort_pairs_direct<KEY, VALUE, DESCENDING>(const KEY*, KEY*, const VALUE*, VALUE*, int64_t, int, \
                                                          Workspace&, cudaStream_t);

GPUPRIM_INSTANTIATE_SORT_PAIRS_DIRECT(int32_t, uint32_t, false)
GPUPRIM_INSTANTIATE_SORT_PAIRS_DIRECT(int32_t, uint64_t, false)
GPUPRIM_INSTANTIATE_SORT_PAIRS_DIRECT(int64_t, uint32_t, false)
GPUPRIM_INSTANTIATE_SORT_PAIRS_DIRECT(int64_t, uint64_t, false)

}  // namespace radix_sort
}  // namespace gpuprim
