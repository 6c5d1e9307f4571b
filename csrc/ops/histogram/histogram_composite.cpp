// gpuprim::histogram: equal-width bins over [lo, hi), composed of torch ops and gpuprim::bincount
// (CompositeImplicitAutograd: one definition serves CPU, CUDA and Meta, and the counting itself is
// bincount's privatized, sync-free kernel). The bin index is computed in float64 and clamped, so a
// value that rounds across the last edge still lands in a bin; a fused single-pass kernel would
// avoid the float64 temporaries and is future work.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>

#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> histogram_composite(const at::Tensor& x, int64_t bins, double lo, double hi,
                                                       const std::optional<at::Tensor>& weights,
                                                       std::optional<bool> deterministic) {
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(x.scalar_type()) || at::isIntegralType(x.scalar_type(), false),
                      "histogram", "x", "a floating-point or integer tensor", x.scalar_type());
  GPUPRIM_CHECK_ARG(bins >= 1, "histogram", "bins", ">= 1", bins);
  GPUPRIM_CHECK_ARG(std::isfinite(lo) && std::isfinite(hi), "histogram", "lo and hi", "finite",
                    c10::str("lo=", lo, ", hi=", hi));
  GPUPRIM_CHECK_ARG(lo < hi, "histogram", "lo", c10::str("< hi (", hi, ")"), lo);
  const at::Tensor values = x.reshape(-1).to(at::kDouble);
  const at::Tensor in_range = values.ge(lo).logical_and(values.lt(hi));  // NaN compares false: dropped
  const at::Tensor position = values.sub(lo).mul(static_cast<double>(bins) / (hi - lo)).floor().clamp(0, bins - 1);
  const at::Tensor index = at::where(in_range, position, at::Scalar(-1.0)).to(at::kLong);
  std::optional<at::Tensor> flat_weights;
  if (weights.has_value()) {
    GPUPRIM_CHECK_ARG(weights->sym_sizes() == x.sym_sizes(), "histogram", "weights", "of x's shape",
                      weights->sym_sizes());
    flat_weights = weights->reshape(-1);
  }
  return gpuprim::bincount(index, bins, flat_weights, deterministic);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CompositeImplicitAutograd, m) { m.impl("histogram", &histogram_composite); }

}  // namespace gpuprim
