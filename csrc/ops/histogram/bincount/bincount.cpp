// gpuprim::bincount's device-independent part: the argument checks every kernel of the op uses, and the
// outputs of the histogram family's CUDA kernels.
#include "common/torch_utils.h"
#include "ops/histogram/bincount/bincount.h"

namespace gpuprim {

at::ScalarType bincount_check(const at::Tensor& x, int64_t num_bins, const std::optional<at::Tensor>& weights) {
  GPUPRIM_CHECK_ARG(x.dim() == 1, "bincount", "x", "1-D", std::to_string(x.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(at::isIntegralType(x.scalar_type(), /*includeBool=*/false), "bincount", "x",
                      "an integer tensor", x.scalar_type());
  GPUPRIM_CHECK_ARG(num_bins >= 1, "bincount", "num_bins", ">= 1", num_bins);
  if (!weights.has_value()) return at::kLong;
  const at::Tensor& w = *weights;
  check_same_device("bincount", x, "weights", w);
  GPUPRIM_CHECK_ARG(w.dim() == 1 && w.sym_size(0) == x.sym_size(0), "bincount",
                    "weights", c10::str("1-D with the length of x (", x.sym_size(0), ")"), w.sym_sizes());
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(w.scalar_type()) || at::isIntegralType(w.scalar_type(), false),
                      "bincount", "weights", "a floating-point or integer tensor", w.scalar_type());
  return w.scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
}

CountBuffers count_buffers(const at::Tensor& x, int64_t num_bins, at::ScalarType count_type,
                           const std::optional<at::Tensor>& weights) {
  CountBuffers buffers;
  buffers.counts = at::empty({num_bins}, x.options().dtype(count_type));
  buffers.overflow = at::empty({1}, x.options().dtype(at::kLong));
  if (weights.has_value()) buffers.weights = weights->to(count_type).contiguous();  // a cast unless fp32 weights
  return buffers;
}

}  // namespace gpuprim
