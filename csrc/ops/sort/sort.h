// gpuprim::sort — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Validates arguments and returns the sort dim in [0, max(ndim, 1)).
int64_t sort_check(const at::Tensor& x, int64_t dim);

}  // namespace gpuprim
