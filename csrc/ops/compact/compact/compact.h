// gpuprim::compact — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Validates (x, mask): mask is a bool tensor of x's shape on x's device; x of a supported dtype. Errors name
// gpuprim.<op>.
void compact_check(const at::Tensor& x, const at::Tensor& mask, const char* op = "compact");

// Validates compact's arguments (compact_check, and fill_value: a value x's dtype cannot hold, 300 for uint8 or
// NaN for an integer dtype, is a ValueError naming fill_value) and returns fill_value as a 0-dim CPU tensor of x's
// dtype (undefined for nullopt).
at::Tensor compact_checked_fill(const at::Tensor& x, const at::Tensor& mask,
                                const std::optional<at::Scalar>& fill_value);

// compact's outputs on x's device, not initialized (SymInt-safe): out [x.numel()] of x's dtype and count [1] int64.
std::tuple<at::Tensor, at::Tensor> compact_outputs(const at::Tensor& x);

}  // namespace gpuprim
