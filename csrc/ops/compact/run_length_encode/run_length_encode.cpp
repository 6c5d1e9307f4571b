// gpuprim::run_length_encode's device-independent part: the argument checks every kernel of the op uses.
#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"

namespace gpuprim {

void run_length_encode_check(const at::Tensor& x) {
  GPUPRIM_CHECK_ARG(x.dim() == 1, "run_length_encode", "x", "1-D", std::to_string(x.dim()) + "-D tensor");
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true),
                      "run_length_encode", "x", "a floating-point, integer or bool tensor", type);
}

}  // namespace gpuprim
