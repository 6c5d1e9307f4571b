// gpuprim::compact's device-independent part, used by every kernel of compact and masked_select: the argument
// checks and the fill value.
#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"

namespace gpuprim {

void compact_check(const at::Tensor& x, const at::Tensor& mask, const char* op) {
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), op, "x",
                      "a floating-point, integer or bool tensor", type);
  GPUPRIM_CHECK_DTYPE(mask.scalar_type() == at::kBool, op, "mask", "a bool tensor", mask.scalar_type());
  check_same_device(op, x, "mask", mask);
  GPUPRIM_CHECK_ARG(mask.sym_sizes() == x.sym_sizes(), op, "mask", c10::str("of x's shape ", x.sym_sizes()),
                    mask.sym_sizes());
}

at::Tensor compact_checked_fill(const at::Tensor& x, const at::Tensor& mask,
                                const std::optional<at::Scalar>& fill_value) {
  compact_check(x, mask);
  if (!fill_value.has_value()) return at::Tensor();
  return scalar_of_dtype("compact", "fill_value", *fill_value, x.scalar_type(), "x's dtype");
}

std::tuple<at::Tensor, at::Tensor> compact_outputs(const at::Tensor& x) {
  return {at::empty_symint({x.sym_numel()}, x.options()), at::empty({1}, x.options().dtype(at::kLong))};
}

}  // namespace gpuprim
