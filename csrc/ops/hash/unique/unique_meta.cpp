// Shape function of gpuprim::unique for fake tensors / torch.compile (SymInt-safe): fixed capacities, size or
// unique_exact_capacity (x.size(dim) slices with dim), so the sized form has no data-dependent shape.
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/hash/unique/unique.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_meta(const at::Tensor& x, bool return_inverse,
                                                                       bool return_counts, std::optional<int64_t> size,
                                                                       const std::optional<c10::Scalar>&,
                                                                       std::optional<int64_t> dim) {
  if (size.has_value()) unique_check(x, size);
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), "unique", "x",
                      "a floating-point, integer or bool tensor", type);
  const auto longs = x.options().dtype(at::kLong);
  if (dim.has_value() && x.dim() > 1) {  // slices: values are x with dim's size made the capacity
    const int64_t d = unique_dim_check(x, *dim);
    const c10::SymInt m = x.sym_size(d);
    const c10::SymInt capacity = size.has_value() ? c10::SymInt(*size) : m;
    std::vector<c10::SymInt> sizes = x.sym_sizes().vec();
    sizes[d] = capacity;
    at::Tensor inverse = at::empty_symint({return_inverse ? m : c10::SymInt(0)}, longs);
    at::Tensor counts = at::empty_symint({return_counts ? capacity : c10::SymInt(0)}, longs);
    return {at::empty_symint(sizes, x.options()), inverse, counts, at::empty({1}, longs)};
  }
  if (dim.has_value()) unique_dim_check(x, *dim);
  const c10::SymInt capacity = size.has_value() ? c10::SymInt(*size) : unique_exact_capacity(x);
  at::Tensor inverse = return_inverse ? at::empty_symint(x.sym_sizes(), longs) : at::empty({0}, longs);
  at::Tensor counts = at::empty_symint({return_counts ? capacity : c10::SymInt(0)}, longs);
  return {at::empty_symint({capacity}, x.options()), inverse, counts, at::empty({1}, longs)};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("unique", &unique_meta); }

}  // namespace gpuprim
