// CUDA glue of gpuprim::histogram: checks, output allocation, stream and workspace; kernels in histogram_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/histogram/bincount/bincount.h"
#include "ops/histogram/histogram/histogram.h"
#include "ops/histogram/histogram/histogram_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> histogram_cuda(const at::Tensor& x, int64_t bins, double lo, double hi,
                                                  const std::optional<at::Tensor>& weights,
                                                  std::optional<bool> deterministic) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const auto count_type = histogram_check(x, bins, lo, hi, weights);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  const CountBuffers out = count_buffers(input, bins, count_type, weights);  // weights as bincount reads them
  TorchWorkspace workspace(input.device());
  histogram_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), input.numel(), bins, lo, hi,
                        histogram_scale(bins, lo, hi), out.weights.defined() ? out.weights.const_data_ptr() : nullptr,
                        to_dtype(count_type), out.counts.mutable_data_ptr(), out.overflow.mutable_data_ptr<int64_t>(),
                        resolve_deterministic(deterministic), workspace, current_stream());
  return {out.counts, out.overflow};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("histogram", &histogram_cuda); }

}  // namespace gpuprim
