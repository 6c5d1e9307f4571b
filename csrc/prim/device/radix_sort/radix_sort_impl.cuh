// Definitions of prim/radix_sort.cuh's CUB calls. Included only by the files that instantiate
// them (common/radix_sort_cuda.cu), so CUB's sort kernels are compiled once per key width.
#pragma once
#include <type_traits>

#include "prim/util/cuda_check.h"
#include "prim/util/cub.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"

namespace gpuprim {
namespace radix_sort {

template <typename Key, typename Value>
int sort_pairs(Key* keys[2], Value* values[2], int64_t n, int end_bit, Workspace& workspace, cudaStream_t stream) {
  // 32-bit offsets inside CUB whenever the payload is 32-bit (n < 2^31): faster kernels.
  using NumItems = std::conditional_t<sizeof(Value) == 4, int32_t, int64_t>;
  size_t temp_bytes = 0;
  {
    cub::DoubleBuffer<Key> key_buffers(keys[0], keys[1]);
    cub::DoubleBuffer<Value> value_buffers(values[0], values[1]);
    GPUPRIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key_buffers, value_buffers, NumItems(n),
                                                       0, end_bit, stream));
  }
  void* temp = workspace.allocate(temp_bytes);
  cub::DoubleBuffer<Key> key_buffers(keys[0], keys[1]);  // fresh: the result's selector counts from 0
  cub::DoubleBuffer<Value> value_buffers(values[0], values[1]);
  GPUPRIM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, key_buffers, value_buffers, NumItems(n), 0,
                                                     end_bit, stream));
  return key_buffers.selector;
}

}  // namespace radix_sort
}  // namespace gpuprim
