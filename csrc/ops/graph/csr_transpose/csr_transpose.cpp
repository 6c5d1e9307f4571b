// Device-independent parts of gpuprim::csr_transpose: argument checks and output shapes (CPU, CUDA, Meta).
#include "ops/graph/csr_transpose/csr_transpose.h"

#include <string>

#include "common/torch_utils.h"

namespace gpuprim {

void csr_transpose_check(const at::Tensor& crow, const at::Tensor& col, const c10::SymInt& num_cols) {
  GPUPRIM_CHECK_ARG(crow.dim() == 1, "csr_transpose", "crow", "1-D", std::to_string(crow.dim()) + "-D tensor");
  GPUPRIM_CHECK_ARG(col.dim() == 1, "csr_transpose", "col", "1-D", std::to_string(col.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(crow.scalar_type() == at::kInt || crow.scalar_type() == at::kLong, "csr_transpose", "crow",
                      "an int32 or int64 tensor", crow.scalar_type());
  GPUPRIM_CHECK_DTYPE(col.scalar_type() == crow.scalar_type(), "csr_transpose", "col",
                      c10::str("of crow's dtype ", crow.scalar_type()), col.scalar_type());
  GPUPRIM_CHECK_ARG(crow.sym_size(0) >= 1, "csr_transpose", "crow", "of length rows + 1 >= 1", crow.sym_size(0));
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
