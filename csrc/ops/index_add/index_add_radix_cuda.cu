// The radix sorts of the index reductions (prim/index_reduce.cuh): prim/radix_sort.cuh's sort_pairs,
// whose CUB instantiations live once in common/radix_sort_cuda.cu.
#include "prim/index_reduce.cuh"
#include "prim/radix_sort.cuh"

namespace gpuprim {
namespace index_reduce {

int sort_destinations(uint32_t* keys[2], int32_t* positions[2], int64_t n, int end_bit, Workspace& workspace,
                      cudaStream_t stream) {
  return radix_sort::sort_pairs<uint32_t, int32_t>(keys, positions, n, end_bit, workspace, stream);
}

int sort_destinations(uint64_t* keys[2], int64_t* positions[2], int64_t n, int end_bit, Workspace& workspace,
                      cudaStream_t stream) {
  return radix_sort::sort_pairs<uint64_t, int64_t>(keys, positions, n, end_bit, workspace, stream);
}

}  // namespace index_reduce
}  // namespace gpuprim
