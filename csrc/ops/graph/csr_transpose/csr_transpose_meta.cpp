// Shape function of gpuprim::csr_transpose (SymInt-safe, no data access).
#include <torch/library.h>

#include "ops/graph/csr_transpose/csr_transpose.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose_meta(const at::Tensor& crow, const at::Tensor& col,
                                                                  c10::SymInt num_cols) {
  csr_transpose_check(crow, col, num_cols);
  return csr_transpose_outputs(crow, col, num_cols);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("csr_transpose", &csr_transpose_meta); }

}  // namespace gpuprim
