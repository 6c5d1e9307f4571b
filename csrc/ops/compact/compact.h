// gpuprim::compact — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Validates (x, mask): mask is a bool tensor of x's shape on x's device; x of a supported dtype.
void compact_check(const at::Tensor& x, const at::Tensor& mask);

}  // namespace gpuprim
