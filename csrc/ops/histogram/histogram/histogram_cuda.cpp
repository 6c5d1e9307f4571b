// CUDA glue of gpuprim::histogram: checks, output allocation, stream and workspace; kernels in histogram_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/histogram/histogram/histogram.h"
#include "ops/histogram/histogram/histogram_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> histogram_cuda(const at::Tensor& x, int64_t bins, double lo, double hi,
                                                  const std::optional<at::Tensor>& weights,
                                                  std::optional<bool> deterministic) {
  const auto count_type = histogram_check(x, bins, lo, hi, weights);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  at::Tensor counts = at::empty({bins}, input.options().dtype(count_type));
  at::Tensor overflow = at::empty({1}, input.options().dtype(at::kLong));
  // Weights are read in the counts' dtype, as bincount does (a cast only for non-fp32 weights).
  const at::Tensor w = weights.has_value() ? weights->to(count_type).contiguous() : at::Tensor();
  TorchWorkspace workspace(input.device());
  histogram_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), input.numel(), bins, lo, hi,
                        histogram_scale(bins, lo, hi), w.defined() ? w.const_data_ptr() : nullptr,
                        to_dtype(count_type), counts.mutable_data_ptr(), overflow.mutable_data_ptr<int64_t>(),
                        resolve_deterministic(deterministic), workspace, current_stream());
  return {counts, overflow};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("histogram", &histogram_cuda); }

}  // namespace gpuprim
