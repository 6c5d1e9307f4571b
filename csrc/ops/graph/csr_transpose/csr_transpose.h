// gpuprim::csr_transpose — declarations shared by its CPU, CUDA and Meta files.
#pragma once
#include <ATen/ATen.h>

#include "ops/graph/csr_transpose/csr_transpose_launch.h"

namespace gpuprim {

// crow [rows + 1] and col [nnz] of one index dtype (int32/int64) on one device; num_cols >= 0. SymInt-safe.
void csr_transpose_check(const at::Tensor& crow, const at::Tensor& col, const c10::SymInt& num_cols);

// Empty outputs crow_t [num_cols + 1], col_t [nnz] (crow's dtype), perm [nnz] int64.
std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose_outputs(const at::Tensor& crow, const at::Tensor& col,
                                                                     const c10::SymInt& num_cols);

}  // namespace gpuprim
