// gpuprim::unique — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

#include <optional>

namespace gpuprim {

// Validates x (floating-point, integer or bool, any shape) and size (>= 0); returns the capacity of values and
// counts: size, or x.numel() without one.
int64_t unique_check(const at::Tensor& x, std::optional<int64_t> size);

// fill_value (0 without one) as the raw bits of x's dtype, zero-extended.
uint64_t unique_fill_bits(const at::Tensor& x, const std::optional<c10::Scalar>& fill_value);

}  // namespace gpuprim
