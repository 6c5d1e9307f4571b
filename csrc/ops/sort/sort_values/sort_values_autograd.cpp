// Autograd of gpuprim::sort_values. Its gradient needs the positions the values came from, which the keys-only
// sort does not compute: when x needs a gradient this is gpuprim::sort's values, through sort's autograd
// (gradient scattered back through its indices); otherwise the op runs below autograd.
#include <ATen/core/grad_mode.h>
#include <torch/library.h>

#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

at::Tensor sort_values_autograd(const at::Tensor& x, int64_t dim, bool descending) {
  if (x.requires_grad() && at::GradMode::is_enabled()) return std::get<0>(gpuprim::sort(x, dim, descending));
  at::AutoDispatchBelowADInplaceOrView guard;
  return gpuprim::sort_values(x, dim, descending);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("sort_values", &sort_values_autograd); }

}  // namespace gpuprim
