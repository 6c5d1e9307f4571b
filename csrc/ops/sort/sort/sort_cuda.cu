// Kernels of gpuprim::sort: prim's row sort (prim/device/radix_sort: radix_sort::sort_rows) of the dtype's keys,
// in torch.sort's order (the key codec's).
#include "ops/sort/sort/sort_launch.h"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"

namespace gpuprim {

void sort_cuda_launch(const void* x, DType type, int64_t rows, int64_t n, bool descending, void* values,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  dispatch<AllTypes>("sort", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Bits = KeyBits<T>;
    radix_sort::sort_rows(static_cast<const Bits*>(x), key_codec<T>(descending), rows, n, static_cast<Bits*>(values),
                          indices, workspace, stream);
  });
}

}  // namespace gpuprim
