// Shape function of gpuprim::unique for fake tensors / torch.compile (SymInt-safe): fixed capacities, size or
// x's element count, so the sized form has no data-dependent shape.
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/hash/unique/unique.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_meta(const at::Tensor& x, bool return_inverse,
                                                                       bool return_counts, std::optional<int64_t> size,
                                                                       const std::optional<c10::Scalar>&) {
  if (size.has_value()) unique_check(x, size);
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), "unique", "x",
                      "a floating-point, integer or bool tensor", type);
  const c10::SymInt capacity = size.has_value() ? c10::SymInt(*size) : x.sym_numel();
  const auto longs = x.options().dtype(at::kLong);
  at::Tensor inverse = return_inverse ? at::empty_symint(x.sym_sizes(), longs) : at::empty({0}, longs);
  at::Tensor counts = at::empty_symint({return_counts ? capacity : c10::SymInt(0)}, longs);
  return {at::empty_symint({capacity}, x.options()), inverse, counts, at::empty({1}, longs)};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("unique", &unique_meta); }

}  // namespace gpuprim
