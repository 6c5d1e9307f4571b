// gpuprim::compact — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Validates (x, mask): mask is a bool tensor of x's shape on x's device; x of a supported dtype. Errors name
// gpuprim.<op>.
void compact_check(const at::Tensor& x, const at::Tensor& mask, const char* op = "compact");

// fill_value as a 0-dim CPU tensor of x's dtype (undefined for nullopt); a value x's dtype cannot
// hold (300 for uint8, NaN for an integer dtype) is a ValueError naming fill_value.
at::Tensor compact_fill(const at::Tensor& x, const std::optional<at::Scalar>& fill_value);

}  // namespace gpuprim
