// Device-independent parts of gpuprim::csr_transpose: argument checks and output shapes (CPU, CUDA, Meta).
#include "ops/graph/csr_transpose/csr_transpose.h"

#include <string>

#include "common/torch_utils.h"
#include "ops/graph/csr_checks.h"

namespace gpuprim {

void csr_transpose_check(const at::Tensor& crow, const at::Tensor& col, const c10::SymInt& num_cols) {
  check_csr_arguments("csr_transpose", crow, col, "rows");
  GPUPRIM_CHECK_ARG(num_cols >= 0, "csr_transpose", "num_cols", ">= 0", num_cols);
  check_same_device("csr_transpose", crow, "col", col);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose_outputs(const at::Tensor& crow, const at::Tensor& col,
                                                                     const c10::SymInt& num_cols) {
  const auto options = crow.options().memory_format(at::MemoryFormat::Contiguous);
  return {at::empty_symint({num_cols + 1}, options), at::empty_symint({col.sym_size(0)}, options),
          at::empty_symint({col.sym_size(0)}, options.dtype(at::kLong))};
}

}  // namespace gpuprim
