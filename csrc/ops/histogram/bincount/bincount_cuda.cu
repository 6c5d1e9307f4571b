// Kernels of gpuprim::bincount: prim's histogram, each value its own bin.
#include "ops/histogram/bincount/bincount_launch.h"
#include "prim/device/histogram/histogram.cuh"
#include "prim/util/dispatch.h"

namespace gpuprim {

void bincount_cuda_launch(const void* x, DType x_type, int64_t n, int64_t num_bins, const void* weights,
                          DType count_type, void* counts, int64_t* overflow, bool deterministic,
                          Workspace& workspace, cudaStream_t stream) {
  using IntegerTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t>;
  dispatch<IntegerTypes>("bincount", x_type, [&](auto tag) {
    using Index = typename decltype(tag)::type;
    histogram::launch(static_cast<const Index*>(x), n, histogram::IndexBins<Index>{num_bins}, weights, count_type,
                      counts, overflow, deterministic, workspace, stream);
  });
}

}  // namespace gpuprim
