// gpuprim::run_length_encode — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Validates x: 1-D, floating-point, integer or bool.
void run_length_encode_check(const at::Tensor& x);

// The slices form (dim=, torch.unique_consecutive(dim=)): validates x (at least 1-D, floating-point, integer or
// bool, no empty dimension other than dim, as torch) and returns dim wrapped into [0, x.dim()). SymInt-safe.
int64_t run_length_encode_dim_check(const at::Tensor& x, int64_t dim);

// The number of elements of one slice x.select(dim, i) (the product of the other dimensions).
int64_t run_length_encode_slice_width(const at::Tensor& x, int64_t dim);

}  // namespace gpuprim
