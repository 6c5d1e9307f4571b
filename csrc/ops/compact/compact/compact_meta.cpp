// Shape function of gpuprim::compact for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> compact_meta(const at::Tensor& x, const at::Tensor& mask,
                                                const std::optional<at::Scalar>& fill_value) {
  compact_check(x, mask);
  compact_fill(x, fill_value);
  return {at::empty_symint({x.sym_numel()}, x.options()), at::empty({1}, x.options().dtype(at::kLong))};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("compact", &compact_meta); }

}  // namespace gpuprim
