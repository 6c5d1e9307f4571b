// The radix sorts of gpuprim::embedding_bag's backward: prim/radix_sort.cuh's sort_pairs, whose CUB
// instantiations live once in common/radix_sort_cuda.cu (shared with sort and index_add).
#include "ops/embedding_bag/embedding_bag_launch.h"
#include "prim/radix_sort.cuh"

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
