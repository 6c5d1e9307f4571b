// Checks shared by the graph ops (spmm, csr_transpose, bfs) on a CSR pair: crow [rows + 1] and col [nnz].
// Header-only: the build compiles only the op folders' sources.
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "common/input_errors.h"
#include "common/torch_utils.h"

namespace gpuprim {

// crow and col 1-D of one index dtype (int32 or int64), crow of length >= 1 (SymInt-safe). `rows`: what crow's
// length counts, in messages ("rows", "vertices").
inline void check_csr_arguments(const char* op, const at::Tensor& crow, const at::Tensor& col, const char* rows) {
  GPUPRIM_CHECK_ARG(crow.dim() == 1, op, "crow", "1-D", std::to_string(crow.dim()) + "-D tensor");
  GPUPRIM_CHECK_ARG(col.dim() == 1, op, "col", "1-D", std::to_string(col.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(crow.scalar_type() == at::kInt || crow.scalar_type() == at::kLong, op, "crow",
                      "an int32 or int64 tensor", crow.scalar_type());
  GPUPRIM_CHECK_DTYPE(col.scalar_type() == crow.scalar_type(), op, "col",
                      c10::str("of crow's dtype ", crow.scalar_type()), col.scalar_type());
  GPUPRIM_CHECK_ARG(crow.sym_size(0) >= 1, op, "crow", c10::str("of length ", rows, " + 1 >= 1"), crow.sym_size(0));
}

// The rules only the data can break, on host data (the CPU kernels): crow starts at 0, never decreases and ends
// at nnz; every col in [0, cols). Raises naming the first violation.
inline void check_csr_structure(InputOp op, const int64_t* crow, int64_t rows, const int64_t* col, int64_t nnz,
                                int64_t cols) {
  if (crow[0] != 0) raise_input_error(op, InputArg::kCrow, InputRule::kNonZeroStart, 0, crow[0], 0);
  for (int64_t r = 1; r <= rows; ++r) {
    if (crow[r] < crow[r - 1]) raise_input_error(op, InputArg::kCrow, InputRule::kDecreasing, r, crow[r], crow[r - 1]);
  }
  if (crow[rows] != nnz) {
    raise_input_error(op, InputArg::kCrow, crow[rows] > nnz ? InputRule::kPastEnd : InputRule::kNotAtEnd, rows,
                      crow[rows], nnz);
  }
  for (int64_t k = 0; k < nnz; ++k) {
    if (col[k] < 0 || col[k] >= cols) raise_input_error(op, InputArg::kCol, InputRule::kOutOfRange, k, col[k], cols);
  }
}

}  // namespace gpuprim
