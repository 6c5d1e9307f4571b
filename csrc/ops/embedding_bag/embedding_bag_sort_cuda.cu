// CUB DeviceRadixSort for gpuprim::embedding_bag's backward, kept apart from embedding_bag_cuda.cu so that
// editing the op's own kernels does not recompile CUB (prim/radix_sort_impl.cuh, implicit instantiations).
#include "ops/embedding_bag/embedding_bag_launch.h"
#include "prim/radix_sort_impl.cuh"

namespace gpuprim {

int embedding_bag_sort_pairs(uint32_t* keys[2], int32_t* values[2], int64_t n, int end_bit, Workspace& workspace,
                             cudaStream_t stream) {
  return radix_sort::sort_pairs<uint32_t, int32_t>(keys, values, n, end_bit, workspace, stream);
}

int embedding_bag_sort_pairs(uint64_t* keys[2], int64_t* values[2], int64_t n, int end_bit, Workspace& workspace,
                             cudaStream_t stream) {
  return radix_sort::sort_pairs<uint64_t, int64_t>(keys, values, n, end_bit, workspace, stream);
}

}  // namespace gpuprim
