// Shape function of gpuprim::sort for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/sort/sort/sort.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> sort_meta(const at::Tensor& x, int64_t dim, bool /*descending*/) {
  sort_check(x, dim);
  return {at::empty_symint(x.sym_sizes(), x.options()),
          at::empty_symint(x.sym_sizes(), x.options().dtype(at::kLong))};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("sort", &sort_meta); }

}  // namespace gpuprim
