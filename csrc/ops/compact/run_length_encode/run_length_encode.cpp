// gpuprim::run_length_encode's device-independent part: the argument checks every kernel of the op uses.
#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"

namespace gpuprim {

namespace {

void check_dtype(const at::Tensor& x) {
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true),
                      "run_length_encode", "x", "a floating-point, integer or bool tensor", type);
}

}  // namespace

void run_length_encode_check(const at::Tensor& x) {
  GPUPRIM_CHECK_ARG(x.dim() == 1, "run_length_encode", "x", "1-D", std::to_string(x.dim()) + "-D tensor");
  check_dtype(x);
}

int64_t run_length_encode_dim_check(const at::Tensor& x, int64_t dim) {
  GPUPRIM_CHECK_INDEX(x.dim() > 0, "run_length_encode", "dim", "None for a 0-d x", dim);
  const int64_t d = wrap_dim("run_length_encode", "dim", dim, x.dim());
  check_dtype(x);
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i == d) continue;
    GPUPRIM_CHECK_ARG(x.sym_size(i) != 0, "run_length_encode", "x",
                      c10::str("free of empty dimensions other than dim = ", d, " (as torch.unique_consecutive)"),
                      x.sym_sizes());
  }
  return d;
}

int64_t run_length_encode_slice_width(const at::Tensor& x, int64_t dim) {
  int64_t width = 1;
  for (int64_t i = 0; i < x.dim(); ++i) width *= i == dim ? 1 : x.size(i);
  return width;
}

}  // namespace gpuprim
