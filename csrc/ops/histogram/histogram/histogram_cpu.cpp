// CPU kernel of gpuprim::histogram, the readable reference: the bin index in float64 (subtract lo,
// multiply by bins / (hi - lo), floor, clamp, so a value that rounds across the last edge still
// lands in a bin), then gpuprim::bincount. The CUDA kernel does the same float64 steps per value.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>

#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"
#include "ops/histogram/histogram/histogram.h"

namespace gpuprim {

namespace {

std::tuple<at::Tensor, at::Tensor> histogram_cpu(const at::Tensor& x, int64_t bins, double lo, double hi,
                                                 const std::optional<at::Tensor>& weights,
                                                 std::optional<bool> deterministic) {
  histogram_check(x, bins, lo, hi, weights);
  const at::Tensor values = x.reshape(-1).to(at::kDouble);
  const at::Tensor in_range = values.ge(lo).logical_and(values.lt(hi));  // NaN compares false: dropped
  const at::Tensor position = values.sub(lo).mul(histogram_scale(bins, lo, hi)).floor().clamp(0, bins - 1);
  const at::Tensor index = at::where(in_range, position, at::Scalar(-1.0)).to(at::kLong);
  std::optional<at::Tensor> flat_weights;
  if (weights.has_value()) flat_weights = weights->reshape(-1);
  return gpuprim::bincount(index, bins, flat_weights, deterministic);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("histogram", &histogram_cpu); }

}  // namespace gpuprim
