// Shape function of gpuprim::cumsum for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/scan/cumsum/cumsum.h"

namespace gpuprim {
namespace {

at::Tensor cumsum_meta(const at::Tensor& x, int64_t dim, bool /*exclusive*/, bool /*reverse*/) {
  cumsum_check(x, dim);
  return at::empty_symint(x.sym_sizes(), x.options().dtype(cumsum_out_dtype(x.scalar_type())));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("cumsum", &cumsum_meta); }

}  // namespace gpuprim
