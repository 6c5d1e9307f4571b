// gpuprim::cumsum — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// torch.cumsum's promotion: integer and bool inputs give int64, floats keep their dtype.
inline at::ScalarType cumsum_out_dtype(at::ScalarType in) {
  return at::isFloatingType(in) ? in : at::kLong;
}

// Validates arguments and returns the scan dim in [0, max(ndim, 1)).
int64_t cumsum_check(const at::Tensor& x, int64_t dim);

}  // namespace gpuprim
