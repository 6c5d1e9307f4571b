// Kernels of gpuprim::histogram: prim/histogram.cuh's privatized counting, the bin of each value
// computed in the kernel (EvenBins; PowerOfTwoBins where integer shifts give the same bins): one
// pass over x, no float64 temporaries.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ops/histogram/histogram/histogram_launch.h"
#include "prim/device/histogram/histogram.cuh"
#include "prim/util/convert.cuh"

namespace gpuprim {

int histogram_power_of_two_shift(DType x_type, int64_t bins, double lo, double hi) {
  const bool small_int = x_type == DType::kUInt8 || x_type == DType::kInt8 || x_type == DType::kInt16 ||
                         x_type == DType::kInt32;
  constexpr double kLimit = double(int64_t(1) << 40);
  if (!small_int || lo != std::floor(lo) || hi != std::floor(hi) || std::fabs(lo) > kLimit || std::fabs(hi) > kLimit) {
    return -1;
  }
  const double span = hi - lo;  // exact: integers below 2^41
  for (int shift = 0; shift <= 40; ++shift) {
    if (double(bins) * std::ldexp(1.0, shift) == span) return shift;
  }
  return -1;
}

void histogram_cuda_launch(const void* x, DType x_type, int64_t n, int64_t bins, double lo, double hi, double scale,
                           const void* weights, DType count_type, void* counts, int64_t* overflow, bool deterministic,
                           Workspace& workspace, cudaStream_t stream) {
  const int shift = histogram_power_of_two_shift(x_type, bins, lo, hi);
  GPUPRIM_DISPATCH_ALL("histogram", x_type, [&] {
    if constexpr (std::is_integral_v<scalar_t> && sizeof(scalar_t) <= 4 && !std::is_same_v<scalar_t, bool>) {
      if (shift >= 0) {
        const histogram::PowerOfTwoBins<scalar_t> binner{bins, int64_t(lo), int64_t(hi), shift};
        return histogram::launch(static_cast<const scalar_t*>(x), n, binner, weights, count_type, counts, overflow,
                                 deterministic, workspace, stream);
      }
    }
    if constexpr (!std::is_same_v<scalar_t, bool>) {
      histogram::launch(static_cast<const scalar_t*>(x), n, histogram::EvenBins<scalar_t>{bins, lo, hi, scale},
                        weights, count_type, counts, overflow, deterministic, workspace, stream);
    } else {
      unsupported_dtype("histogram", x_type);
    }
  });
}

}  // namespace gpuprim
