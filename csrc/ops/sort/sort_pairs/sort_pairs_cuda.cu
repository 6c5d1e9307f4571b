// gpuprim::sort_pairs' direct path: picks the key and value widths of CUB's SortPairs (input and
// output buffers), compiled once in prim/device/radix_sort/radix_sort_direct.cu (the row sort shares it).
// Signed keys go to CUB as they are (CUB orders them as signed); values travel as raw bits.
#include "ops/sort/sort_pairs/sort_pairs_launch.h"
#include "prim/device/radix_sort/radix_sort.cuh"

namespace gpuprim {
namespace {

template <typename Key, typename Value>
void sort_pairs_typed(const void* keys_in, void* keys_out, const void* values_in, void* values_out, int64_t n,
                      int end_bit, Workspace& workspace, cudaStream_t stream) {
  radix_sort::sort_pairs_direct<Key, Value>(static_cast<const Key*>(keys_in), static_cast<Key*>(keys_out),
                                            static_cast<const Value*>(values_in), static_cast<Value*>(values_out), n,
                                            end_bit, workspace, stream);
}

template <typename Key>
void sort_pairs_by_value_width(const void* keys_in, void* keys_out, const void* values_in, void* values_out,
                               int value_bytes, int64_t n, int end_bit, Workspace& workspace, cudaStream_t stream) {
  if (value_bytes == 4) {
    sort_pairs_typed<Key, uint32_t>(keys_in, keys_out, values_in, values_out, n, end_bit, workspace, stream);
  } else {
    sort_pairs_typed<Key, uint64_t>(keys_in, keys_out, values_in, values_out, n, end_bit, workspace, stream);
  }
}

}  // namespace

void sort_pairs_cuda_launch(const void* keys_in, void* keys_out, int key_bytes, const void* values_in,
                            void* values_out, int value_bytes, int64_t n, int end_bit, Workspace& workspace,
                            cudaStream_t stream) {
  if (n <= 0) return;
  if (key_bytes == 4) {
    sort_pairs_by_value_width<int32_t>(keys_in, keys_out, values_in, values_out, value_bytes, n, end_bit, workspace,
                                       stream);
  } else {
    sort_pairs_by_value_width<int64_t>(keys_in, keys_out, values_in, values_out, value_bytes, n, end_bit, workspace,
                                       stream);
  }
}

}  // namespace gpuprim
