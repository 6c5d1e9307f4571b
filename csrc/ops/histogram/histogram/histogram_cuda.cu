// Kernels of gpuprim::histogram: prim's histogram with the bin of each value computed in the kernel
// (EvenBins; PowerOfTwoBins where integer shifts give the same bins): one pass over x, no float64 temporaries.
#include "ops/histogram/histogram/histogram_launch.h"
#include "prim/device/histogram/histogram.cuh"
#include "prim/util/dispatch.h"

namespace gpuprim {

void histogram_cuda_launch(const void* x, DType x_type, int64_t n, int64_t bins, double lo, double hi, double scale,
                           const void* weights, DType count_type, void* counts, int64_t* overflow, bool deterministic,
                           Workspace& workspace, cudaStream_t stream) {
  using ValueTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t, __half, __nv_bfloat16, float, double>;
  dispatch<ValueTypes>("histogram", x_type, [&](auto tag) {
    using Value = typename decltype(tag)::type;
    const auto* values = static_cast<const Value*>(x);
    if constexpr (histogram::kPowerOfTwoBinsExact<Value>) {
      const int shift = histogram::power_of_two_shift<Value>(bins, lo, hi);
      if (shift >= 0) {
        const histogram::PowerOfTwoBins<Value> binner{bins, int64_t(lo), int64_t(hi), shift};
        return histogram::launch(values, n, binner, weights, count_type, counts, overflow, deterministic, workspace,
                                 stream);
      }
    }
    histogram::launch(values, n, histogram::EvenBins<Value>{bins, lo, hi, scale}, weights, count_type, counts,
                      overflow, deterministic, workspace, stream);
  });
}

}  // namespace gpuprim
