// gpuprim::moe_update_bias: one step of auxiliary-loss-free load balancing, bias + rate * sign(mean load - load),
// a composition of ATen ops (CompositeImplicitAutograd, no host sync). The sign compares sum(counts) with
// E * counts[e], exact for integer counts, so the step is the same on every device and run.
#include <torch/library.h>

#include <cmath>

#include "common/torch_utils.h"

namespace gpuprim {
namespace {

at::Tensor moe_update_bias_composite(const at::Tensor& bias, const at::Tensor& counts, double rate) {
  constexpr const char* op = "moe_update_bias";
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(bias.scalar_type()), op, "bias", "a floating-point tensor",
                      bias.scalar_type());
  GPUPRIM_CHECK_ARG(bias.dim() == 1, op, "bias", "1-D [num_experts]", bias.sym_sizes());
  GPUPRIM_CHECK_ARG(counts.sym_sizes().equals(bias.sym_sizes()), op, "counts",
                    c10::str("of bias' shape ", bias.sym_sizes()), counts.sym_sizes());
  check_same_device(op, bias, "counts", counts);
  // As torch.optim's learning rates: a negative or NaN rate would move every bias the wrong way.
  GPUPRIM_CHECK_ARG(rate >= 0.0 && std::isfinite(rate), op, "rate", "finite and >= 0", rate);
  const at::Tensor load = at::isFloatingType(counts.scalar_type()) ? counts : counts.to(at::kLong);
  const at::Tensor above_mean =
      load.sum() - load.mul(c10::Scalar(bias.sym_size(0)));  // E * (mean - load), sign exact for integers
  return bias + at::sign(above_mean).to(bias.scalar_type()) * rate;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CompositeImplicitAutograd, m) { m.impl("moe_update_bias", &moe_update_bias_composite); }

}  // namespace gpuprim
