// gpuprim::bincount — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>
#include <optional>

namespace gpuprim {

// Checks every argument that can be checked without reading data; returns the counts dtype:
// int64 without weights, float32 for float32 weights, float64 otherwise (as torch.bincount).
at::ScalarType bincount_check(const at::Tensor& x, int64_t num_bins, const std::optional<at::Tensor>& weights);

// What the CUDA kernels of bincount and histogram write, on x's device and not initialized: counts [num_bins]
// of count_type and overflow [1] int64; and the weights they read, in count_type and contiguous (as
// torch.bincount reads them; undefined without weights).
struct CountBuffers {
  at::Tensor counts, overflow, weights;
};
CountBuffers count_buffers(const at::Tensor& x, int64_t num_bins, at::ScalarType count_type,
                           const std::optional<at::Tensor>& weights);

}  // namespace gpuprim
