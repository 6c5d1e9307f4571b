// gpuprim::topk — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <tuple>

namespace gpuprim {

// Validates (x, k, dim) and returns dim wrapped into [0, max(ndim, 1)). Guards on a symbolic k.
int64_t topk_check(const at::Tensor& x, const c10::SymInt& k, int64_t dim);

// x's sizes with sizes[dim] = k (0-d x: no dims).
std::vector<c10::SymInt> topk_out_sizes(const at::Tensor& x, const c10::SymInt& k, int64_t dim);

// Fills contiguous values [rows, k] and indices (int64) [rows, k] with the top k of each row of the
// contiguous input [rows, n] (1 <= k <= n, rows >= 1), best first (ties: lower index first).
using TopkRows = std::function<void(const at::Tensor& input, at::Tensor& values, at::Tensor& indices, int64_t rows,
                                    int64_t n, int64_t k, bool largest)>;

// The device-independent part of topk (CPU and CUDA kernels alike): checks, outputs, and `dim`
// moved last around topk_rows and back.
std::tuple<at::Tensor, at::Tensor> topk_along_dim(const at::Tensor& x, int64_t k, int64_t dim, bool largest,
                                                  const TopkRows& topk_rows);

// The backward kernel (ATen ops, any device): zeros of self_sizes with grad_values scattered to indices along dim.
void topk_backward_check(const at::Tensor& grad_values, const at::Tensor& indices, c10::SymIntArrayRef self_sizes,
                         int64_t dim);
at::Tensor topk_backward_any_device(const at::Tensor& grad_values, const at::Tensor& indices,
                                    c10::SymIntArrayRef self_sizes, int64_t dim);

}  // namespace gpuprim
