// gpuprim::cumsum's device-independent part: the argument checks every kernel of the op uses.
#include "common/torch_utils.h"
#include "ops/scan/cumsum/cumsum.h"

namespace gpuprim {

int64_t cumsum_check(const at::Tensor& x, int64_t dim) {
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), "cumsum", "x",
                      "a floating-point, integer or bool tensor", type);
  return wrap_dim("cumsum", "dim", dim, x.dim());
}

}  // namespace gpuprim
