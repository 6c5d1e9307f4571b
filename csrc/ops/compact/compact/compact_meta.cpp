// Shape function of gpuprim::compact for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> compact_meta(const at::Tensor& x, const at::Tensor& mask,
                                                const std::optional<at::Scalar>& fill_value) {
  compact_checked_fill(x, mask, fill_value);
  return compact_outputs(x);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("compact", &compact_meta); }

}  // namespace gpuprim
