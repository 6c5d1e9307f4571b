// CUB DeviceRadixSort for gpuprim::sort, one instantiation per key width and index width
// (kept apart from sort_cuda.cu so that editing the op's own kernels does not recompile CUB).
#include "prim/radix_sort_impl.cuh"

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
