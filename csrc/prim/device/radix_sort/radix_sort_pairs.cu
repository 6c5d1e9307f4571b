// CUB DeviceRadixSort (radix_sort.cuh's sort_pairs), one instantiation per key width and payload width,
// compiled once for every op that sorts (sort, index_add, embedding_bag, ...): they include radix_sort.cuh
// only, never radix_sort_impl.cuh. In prim, so that it is built whatever GPUPRIM_OPS selects.
#include "prim/device/radix_sort/radix_sort_impl.cuh"

namespace gpuprim {
namespace radix_sort {

#define GPUPRIM_INSTANTIATE_SORT_PAIRS(KEY, VALUE) \
  template int sort_pairs<KEY, VALUE>(KEY*[2], VALUE*[2], int64_t, int, Workspace&, cudaStream_t);

GPUPRIM_INSTANTIATE_SORT_PAIRS(uint8_t, int32_t)
GPUPRIM_INSTANTIATE_SORT_PAIRS(uint16_t, int32_t)
GPUPRIM_INSTANTIATE_SORT_PAIRS(uint32_t, int32_t)
GPUPRIM_INSTANTIATE_SORT_PAIRS(uint64_t, int32_t)
GPUPRIM_INSTANTIATE_SORT_PAIRS(uint8_t, int64_t)
GPUPRIM_INSTANTIATE_SORT_PAIRS(uint16_t, int64_t)
GPUPRIM_INSTANTIATE_SORT_PAIRS(uint32_t, int64_t)
GPUPRIM_INSTANTIATE_SORT_PAIRS(uint64_t, int64_t)

}  // namespace radix_sort
}  // namespace gpuprim
