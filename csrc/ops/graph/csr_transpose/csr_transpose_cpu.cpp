// CPU kernel of gpuprim::csr_transpose: a counting sort of the nonzeros by column, rows in increasing order
// inside each column (the reference; the CUDA kernel's stable radix sort gives the same integers).
#include <torch/library.h>

#include <vector>

#include "common/input_errors.h"
#include "ops/graph/csr_checks.h"
#include "ops/graph/csr_transpose/csr_transpose.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose_cpu(const at::Tensor& crow, const at::Tensor& col,
                                                                 int64_t num_cols) {
  csr_transpose_check(crow, col, num_cols);
  auto [crow_t, col_t, perm] = csr_transpose_outputs(crow, col, num_cols);
  const at::Tensor crow64 = crow.to(at::kLong).contiguous(), col64 = col.to(at::kLong).contiguous();
  const int64_t* r = crow64.const_data_ptr<int64_t>();
  const int64_t* c = col64.const_data_ptr<int64_t>();
  const int64_t rows = crow.size(0) - 1, nnz = col.size(0);
  check_csr_structure(InputOp::kCsrTranspose, r, rows, c, nnz, num_cols);
  std::vector<int64_t> next(num_cols + 1, 0);
  for (int64_t k = 0; k < nnz; ++k) ++next[c[k] + 1];
  for (int64_t j = 0; j < num_cols; ++j) next[j + 1] += next[j];
  AT_DISPATCH_INDEX_TYPES(crow.scalar_type(), "gpuprim_csr_transpose_cpu", [&] {
    index_t* offsets = crow_t.mutable_data_ptr<index_t>();
    for (int64_t j = 0; j <= num_cols; ++j) offsets[j] = static_cast<index_t>(next[j]);
    index_t* rows_t = col_t.mutable_data_ptr<index_t>();
    int64_t* from = perm.mutable_data_ptr<int64_t>();
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t k = r[i]; k < r[i + 1]; ++k) {
        const int64_t p = next[c[k]]++;
        rows_t[p] = static_cast<index_t>(i);
        from[p] = k;
      }
    }
  });
  return {crow_t, col_t, perm};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("csr_transpose", &csr_transpose_cpu); }

}  // namespace gpuprim
