// Shape function of gpuprim::index_add (SymInt-safe, no data access): the output is input-shaped.
#include <torch/library.h>

#include "common/registration.h"
#include "ops/index_reduce/index_add/index_add.h"

namespace gpuprim {
namespace {

at::Tensor index_add_meta(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                          const c10::Scalar& alpha, std::optional<bool> /*deterministic*/) {
  index_add_check(input, dim, index, source, alpha);
  return at::empty_symint(input.sym_sizes(), input.options().memory_format(at::MemoryFormat::Contiguous));
}

void index_add_meta_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     const c10::Scalar& alpha, std::optional<bool> /*deterministic*/) {
  index_add_check(input, dim, index, source, alpha);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { impl(m, "index_add", &index_add_meta, "index_add_", &index_add_meta_); }

}  // namespace gpuprim
