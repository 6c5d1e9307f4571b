// Kernels of gpuprim::topk: prim's row top-k (prim/device/topk_rows: topk_rows::topk) of the dtype's keys. The
// key codec (prim/util/key_codec.cuh) makes a larger key the better element: ascending keys when largest,
// inverted ones otherwise; NaN the best (the worst when !largest), -0.0 equal to +0.0; among equal keys the
// lower position wins.
#include "ops/topk/topk/topk_launch.h"
#include "prim/device/topk_rows/topk_rows.h"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"

namespace gpuprim {

void topk_cuda_launch(const void* x, DType type, int64_t rows, int64_t n, int64_t k, bool largest, void* values,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  dispatch<AllTypes>("topk", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Bits = KeyBits<T>;
    topk_rows::topk(static_cast<const Bits*>(x), rows, n, k, key_codec<T>(/*descending=*/!largest),
                    static_cast<Bits*>(values), indices, workspace, stream);
  });
}

}  // namespace gpuprim
