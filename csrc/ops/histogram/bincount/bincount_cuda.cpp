// CUDA glue of gpuprim::bincount: checks, output allocation, stream and workspace; kernels in bincount_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/histogram/bincount/bincount.h"
#include "ops/histogram/bincount/bincount_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> bincount_cuda(const at::Tensor& x, int64_t num_bins,
                                                 const std::optional<at::Tensor>& weights,
                                                 std::optional<bool> deterministic) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const auto count_type = bincount_check(x, num_bins, weights);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  const CountBuffers out = count_buffers(input, num_bins, count_type, weights);
  TorchWorkspace workspace(input.device());
  bincount_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), input.numel(), num_bins,
                       out.weights.defined() ? out.weights.const_data_ptr() : nullptr, to_dtype(count_type),
                       out.counts.mutable_data_ptr(), out.overflow.mutable_data_ptr<int64_t>(),
                       resolve_deterministic(deterministic), workspace, current_stream());
  return {out.counts, out.overflow};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("bincount", &bincount_cuda); }

}  // namespace gpuprim
