// gpuprim::run_length_encode — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Validates x: 1-D, floating-point, integer or bool.
void run_length_encode_check(const at::Tensor& x);

}  // namespace gpuprim
