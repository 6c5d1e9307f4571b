// gpuprim::histogram — declarations shared by its CPU, CUDA and Meta files.
#pragma once
#include <ATen/ATen.h>

#include <optional>

namespace gpuprim {

// Checks every argument that can be checked without reading data; returns the counts dtype
// (bincount's: int64 without weights, float32 for float32 weights, float64 otherwise).
at::ScalarType histogram_check(const at::Tensor& x, int64_t bins, double lo, double hi,
                               const std::optional<at::Tensor>& weights);

// bins / (hi - lo): the factor both kernels multiply (x - lo) by, computed once the same way.
inline double histogram_scale(int64_t bins, double lo, double hi) { return static_cast<double>(bins) / (hi - lo); }

}  // namespace gpuprim
