// CUB DeviceRadixSort::SortPairs (input and output buffers) for gpuprim::sort_pairs' direct path.
// Signed keys go to CUB as they are (CUB orders them as signed); values travel as raw bits.
#include "common/cuda_check.h"
#include "ops/sort_pairs/sort_pairs_launch.h"
#include "prim/cub.cuh"

namespace gpuprim {
namespace {

template <typename Key, typename Value>
void sort_pairs_typed(const void* keys_in, void* keys_out, const void* values_in, void* values_out, int64_t n,
                      int end_bit, Workspace& workspace, cudaStream_t stream) {
  const auto* k_in = static_cast<const Key*>(keys_in);
  auto* k_out = static_cast<Key*>(keys_out);
  const auto* v_in = static_cast<const Value*>(values_in);
  auto* v_out = static_cast<Value*>(values_out);
  const auto count = static_cast<int32_t>(n);  // 32-bit offsets inside CUB: its faster kernels
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k_in, k_out, v_in, v_out, count, 0, end_bit, stream));
  void* temp = workspace.allocate(temp_bytes);
  GPUPRIM_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k_in, k_out, v_in, v_out, count, 0, end_bit, stream));
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
