// Kernel side of gpuprim::sort_values: CUB's keys-only onesweep radix sort of one int32 / int64 row, from x
// to values (prim/radix_sort.cuh's sort_keys_direct): each pass moves 8 bytes per int32 element against the
// 16 of gpuprim::sort's pairs, and there are no positions to make or widen.
#include <stdexcept>

#include "ops/sort/sort_values/sort_values_launch.h"
#include "prim/device/radix_sort/radix_sort.cuh"

namespace gpuprim {

void sort_values_cuda_launch(const void* x, DType type, int64_t n, bool descending, void* values,
                             Workspace& workspace, cudaStream_t stream) {
  using radix_sort::sort_keys_direct;
  if (type == DType::kInt32) {
    const auto* in = static_cast<const int32_t*>(x);
    auto* out = static_cast<int32_t*>(values);
    return descending ? sort_keys_direct<int32_t, true>(in, out, n, workspace, stream)
                      : sort_keys_direct<int32_t, false>(in, out, n, workspace, stream);
  }
  if (type == DType::kInt64) {
    const auto* in = static_cast<const int64_t*>(x);
    auto* out = static_cast<int64_t*>(values);
    return descending ? sort_keys_direct<int64_t, true>(in, out, n, workspace, stream)
                      : sort_keys_direct<int64_t, false>(in, out, n, workspace, stream);
  }
  throw std::invalid_argument("gpuprim.sort_values: the keys-only sort takes int32 or int64");
}

}  // namespace gpuprim
