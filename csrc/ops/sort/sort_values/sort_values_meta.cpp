// Shape function of gpuprim::sort_values for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "ops/sort/sort/sort.h"

namespace gpuprim {
namespace {

at::Tensor sort_values_meta(const at::Tensor& x, int64_t dim, bool /*descending*/) {
  sort_check(x, dim, "sort_values");
  return at::empty_symint(x.sym_sizes(), x.options());
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("sort_values", &sort_values_meta); }

}  // namespace gpuprim
