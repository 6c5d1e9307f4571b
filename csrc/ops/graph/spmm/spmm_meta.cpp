// Shape functions of gpuprim::spmm and its backward (SymInt-safe, no data access).
#include <torch/library.h>

#include "common/registration.h"
#include "ops/graph/spmm/spmm.h"

namespace gpuprim {
namespace {

at::Tensor spmm_meta(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                     const at::Tensor& dense, c10::string_view reduce) {
  spmm_check(crow, col, values, dense, reduce);
  return at::empty_symint(spmm_out_sizes(crow, dense), dense.options().memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor spmm_backward_meta(const at::Tensor& grad, const at::Tensor& crow, const at::Tensor& col,
                              const at::Tensor& dense, c10::string_view reduce) {
  spmm_backward_check(grad, crow, col, dense, reduce);
  return at::empty_symint({col.sym_size(0)}, dense.options().memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(Meta, spmm, meta)

}  // namespace gpuprim
