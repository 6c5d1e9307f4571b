// gpuprim::sort — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <tuple>

namespace gpuprim {

// Validates arguments and returns the sort dim in [0, max(ndim, 1)); errors name gpuprim.<op>.
int64_t sort_check(const at::Tensor& x, int64_t dim, const char* op = "sort");

// Fills contiguous values [rows, n] and indices (int64) with the sorted rows of contiguous input [rows, n].
using SortRows = std::function<void(const at::Tensor& input, at::Tensor& values, at::Tensor& indices, int64_t rows,
                                    int64_t n)>;

// The device-independent part of sort (CPU and CUDA kernels alike): checks, contiguous outputs, and
// `dim` moved last around sort_rows and back.
std::tuple<at::Tensor, at::Tensor> sort_along_dim(const at::Tensor& x, int64_t dim, const SortRows& sort_rows);

}  // namespace gpuprim
