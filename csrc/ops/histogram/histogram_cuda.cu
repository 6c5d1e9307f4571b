// Kernels of gpuprim::histogram: prim/histogram.cuh's privatized counting, the bin of each value
// computed in the kernel (EvenBins): one pass over x, no float64 temporaries.
#include <cstdint>
#include <type_traits>

#include "ops/histogram/histogram_launch.h"
#include "prim/histogram.cuh"
#include "prim/types.cuh"

namespace gpuprim {

void histogram_cuda_launch(const void* x, DType x_type, int64_t n, int64_t bins, double lo, double hi, double scale,
                           const void* weights, DType count_type, void* counts, int64_t* overflow, bool deterministic,
                           Workspace& workspace, cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("histogram", x_type, [&] {
    if constexpr (!std::is_same_v<scalar_t, bool>) {
      histogram::launch(static_cast<const scalar_t*>(x), n, histogram::EvenBins<scalar_t>{bins, lo, hi, scale},
                        weights, count_type, counts, overflow, deterministic, workspace, stream);
    } else {
      unsupported_dtype("histogram", x_type);
    }
  });
}

}  // namespace gpuprim
