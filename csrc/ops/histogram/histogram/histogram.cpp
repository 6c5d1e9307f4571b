// gpuprim::histogram's device-independent part: the argument checks every kernel of the op uses.
#include <cmath>

#include "common/torch_utils.h"
#include "ops/histogram/histogram/histogram.h"

namespace gpuprim {

at::ScalarType histogram_check(const at::Tensor& x, int64_t bins, double lo, double hi,
                               const std::optional<at::Tensor>& weights) {
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(x.scalar_type()) || at::isIntegralType(x.scalar_type(), false),
                      "histogram", "x", "a floating-point or integer tensor", x.scalar_type());
  GPUPRIM_CHECK_ARG(bins >= 1, "histogram", "bins", ">= 1", bins);
  GPUPRIM_CHECK_ARG(std::isfinite(lo) && std::isfinite(hi), "histogram", "lo and hi", "finite",
                    c10::str("lo=", lo, ", hi=", hi));
  GPUPRIM_CHECK_ARG(lo < hi, "histogram", "lo", c10::str("< hi (", hi, ")"), lo);
  if (!weights.has_value()) return at::kLong;
  check_same_device("histogram", x, "weights", *weights);
  GPUPRIM_CHECK_ARG(weights->sym_sizes() == x.sym_sizes(), "histogram", "weights", "of x's shape",
                    weights->sym_sizes());
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(weights->scalar_type()) || at::isIntegralType(weights->scalar_type(), false),
                      "histogram", "weights", "a floating-point or integer tensor", weights->scalar_type());
  return weights->scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
}

}  // namespace gpuprim
