// gpuprim::spmm — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>

#include <optional>
#include <vector>

#include "ops/graph/spmm/spmm_launch.h"

namespace gpuprim {

// Checks everything that can be checked without reading data (SymInt-safe: also used by the Meta kernels):
// crow [rows + 1] and col [nnz] of one index dtype, values [nnz] of dense's dtype or None, dense [cols] or
// [cols, features] floating, all on one device. Returns the reduction.
Reduce spmm_check(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                  const at::Tensor& dense, c10::string_view reduce);

// Also checks grad against the forward output's shape and dtype, and that reduce is 'sum' or 'mean' (the max/min
// gradient is built in spmm_autograd.cpp).
Reduce spmm_backward_check(const at::Tensor& grad, const at::Tensor& crow, const at::Tensor& col,
                           const at::Tensor& dense, c10::string_view reduce);

// [rows] or [rows, features] (dense's rank).
std::vector<c10::SymInt> spmm_out_sizes(const at::Tensor& crow, const at::Tensor& dense);

// The rules only the data can break, on host copies (CPU kernels): crow starts at 0, never decreases and ends
// at nnz; every col in [0, cols). Raises naming the first violation.
void spmm_check_structure(const std::vector<int64_t>& crow, const at::Tensor& col, int64_t cols, InputOp op);

SpmmShape spmm_shape(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& dense);

}  // namespace gpuprim
