// gpuprim::unique's device-independent part: the argument checks and the fill value every kernel uses.
#include "ops/hash/unique/unique.h"

#include <cstring>

#include "common/torch_utils.h"

namespace gpuprim {

int64_t unique_check(const at::Tensor& x, std::optional<int64_t> size) {
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), "unique", "x",
                      "a floating-point, integer or bool tensor", type);
  if (size.has_value()) {
    GPUPRIM_CHECK_ARG(*size >= 0, "unique", "size", "non-negative", *size);
    return *size;
  }
  return x.numel();
}

uint64_t unique_fill_bits(const at::Tensor& x, const std::optional<c10::Scalar>& fill_value) {
  const at::Tensor fill =
      at::scalar_tensor(fill_value.value_or(c10::Scalar(0)), at::TensorOptions().dtype(x.scalar_type()));
  uint64_t bits = 0;
  std::memcpy(&bits, fill.const_data_ptr(), fill.element_size());
  return bits;
}

}  // namespace gpuprim
