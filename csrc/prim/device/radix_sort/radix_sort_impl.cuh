// Definition of radix_sort.cuh's sort_pairs. Included only by radix_sort_pairs.cu, which instantiates it,
// so CUB's sort kernels are compiled once per key width.
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
  cub::DoubleBuffer<Key> key_buffers(keys[0], keys[1]);
  cub::DoubleBuffer<Value> value_buffers(values[0], values[1]);
  cub_call(workspace, [&](void* temp, size_t& temp_bytes) {
    key_buffers = cub::DoubleBuffer<Key>(keys[0], keys[1]);  // fresh each call: the selector counts from 0
    value_buffers = cub::DoubleBuffer<Value>(values[0], values[1]);
    return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, key_buffers, value_buffers, NumItems(n), 0, end_bit,
                                           stream);
  });
  return key_buffers.selector;
}

}  // namespace radix_sort
}  // namespace gpuprim
