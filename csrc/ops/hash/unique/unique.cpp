// gpuprim::unique's device-independent part: the argument checks, the fill value and the slices form's outputs.
#include "ops/hash/unique/unique.h"

#include <vector>

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
  return unique_exact_capacity(x).expect_int();
}

c10::SymInt unique_exact_capacity(const at::Tensor& x) {
  constexpr int64_t kByteKeys = 256;
  return x.element_size() == 1 ? x.sym_numel().min(c10::SymInt(kByteKeys)) : x.sym_numel();
}

int64_t unique_dim_check(const at::Tensor& x, int64_t dim) {
  GPUPRIM_CHECK_INDEX(x.dim() > 0, "unique", "dim", "None for a 0-d x", dim);
  const int64_t d = wrap_dim("unique", "dim", dim, x.dim());
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i == d) continue;
    GPUPRIM_CHECK_ARG(x.sym_size(i) != 0, "unique", "x",
                      c10::str("free of empty dimensions other than dim = ", d, " (as torch.unique)"), x.sym_sizes());
  }
  return d;
}

int64_t unique_slice_width(const at::Tensor& x, int64_t dim) {
  int64_t width = 1;
  for (int64_t i = 0; i < x.dim(); ++i) width *= i == dim ? 1 : x.size(i);
  return width;
}

uint64_t unique_fill_bits(const at::Tensor& x, const std::optional<c10::Scalar>& fill_value) {
  return scalar_bits("unique", "fill_value", fill_value.value_or(c10::Scalar(0)), x.scalar_type(), "x's dtype");
}

UniqueSlices unique_slices_prepare(const at::Tensor& x, int64_t d, bool return_inverse, bool return_counts,
                                   std::optional<int64_t> size, const std::optional<c10::Scalar>& fill_value) {
  unique_check(x, size);
  const int64_t m = x.size(d), capacity = size.value_or(m);
  const at::Tensor rows = x.movedim(d, 0).contiguous();
  std::vector<int64_t> sizes = rows.sizes().vec();
  sizes[0] = capacity;
  const auto longs = x.options().dtype(at::kLong);
  return {rows,
          at::empty(sizes, x.options()),
          at::empty({return_inverse ? m : 0}, longs),
          at::empty({return_counts ? capacity : 0}, longs),
          at::empty({1}, longs),
          m,
          unique_slice_width(x, d),
          capacity,
          unique_fill_bits(x, fill_value)};
}

}  // namespace gpuprim
