// gpuprim::unique — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

#include <optional>

namespace gpuprim {

// Validates x (floating-point, integer or bool, any shape) and size (>= 0); returns the capacity of values and
// counts: size, or without one the most distinct values x can hold (unique_exact_capacity).
int64_t unique_check(const at::Tensor& x, std::optional<int64_t> size);

// The exact form's capacity: x.numel(), at most 256 for 1-byte dtypes (no more keys exist). SymInt-safe.
c10::SymInt unique_exact_capacity(const at::Tensor& x);

// dim (the slices form, torch.unique(dim=)) wrapped into [0, x.dim()), checked by torch's rules: x at least 1-D,
// and no empty dimension other than dim (slices of no elements). SymInt-safe (the Meta kernel uses it).
int64_t unique_dim_check(const at::Tensor& x, int64_t dim);

// The number of elements of one slice x.select(dim, i) (the product of the other dimensions).
int64_t unique_slice_width(const at::Tensor& x, int64_t dim);

// fill_value (0 without one) as the raw bits of x's dtype, zero-extended.
uint64_t unique_fill_bits(const at::Tensor& x, const std::optional<c10::Scalar>& fill_value);

// The slices form's input and outputs, the same for every device: rows = x with dim d moved first, contiguous
// ([m, ...]: slice i is row i); values [capacity, ...], inverse [m] (or [0]), counts [capacity] (or [0]),
// num_unique [1]; fill as unique_fill_bits.
struct UniqueSlices {
  at::Tensor rows, values, inverse, counts, num_unique;
  int64_t m, width, capacity;
  uint64_t fill;
};
UniqueSlices unique_slices_prepare(const at::Tensor& x, int64_t d, bool return_inverse, bool return_counts,
                                   std::optional<int64_t> size, const std::optional<c10::Scalar>& fill_value);

}  // namespace gpuprim
