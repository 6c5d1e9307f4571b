// Kernel side of gpuprim::sort_values: CUB's keys-only onesweep radix sort of one int32 / int64 row, from x to
// values (prim/device/radix_sort's sort_keys_direct): each pass moves 8 bytes per int32 element against the 16
// of gpuprim::sort's pairs, and there are no positions to make or widen.
#include "ops/sort/sort_values/sort_values_launch.h"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/util/dispatch.h"

namespace gpuprim {

void sort_values_cuda_launch(const void* x, DType type, int64_t n, bool descending, void* values,
                             Workspace& workspace, cudaStream_t stream) {
  dispatch<IndexTypes>("sort_values", type, [&](auto tag) {  // the keys-only sort takes int32 or int64
    using Key = typename decltype(tag)::type;
    const auto* in = static_cast<const Key*>(x);
    auto* out = static_cast<Key*>(values);
    if (descending) {
      radix_sort::sort_keys_direct<Key, true>(in, out, n, workspace, stream);
    } else {
      radix_sort::sort_keys_direct<Key, false>(in, out, n, workspace, stream);
    }
  });
}

}  // namespace gpuprim
