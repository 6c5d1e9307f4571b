// Kernels of gpuprim::bincount: prim/histogram.cuh's privatized counting, each value its own bin.
#include <cstdint>
#include <type_traits>

#include "ops/histogram/bincount/bincount_launch.h"
#include "prim/device/histogram/histogram.cuh"
#include "prim/util/convert.cuh"

namespace gpuprim {

void bincount_cuda_launch(const void* x, DType x_type, int64_t n, int64_t num_bins, const void* weights,
                          DType count_type, void* counts, int64_t* overflow, bool deterministic,
                          Workspace& workspace, cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("bincount", x_type, [&] {
    if constexpr (std::is_integral_v<scalar_t> && !std::is_same_v<scalar_t, bool>) {
      histogram::launch(static_cast<const scalar_t*>(x), n, histogram::IndexBins<scalar_t>{num_bins}, weights,
                        count_type, counts, overflow, deterministic, workspace, stream);
    } else {
      unsupported_dtype("bincount", x_type);
    }
  });
}

}  // namespace gpuprim
