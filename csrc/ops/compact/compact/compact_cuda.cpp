// CUDA glue of gpuprim::compact: checks, output allocation, stream and workspace; kernels in compact_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"
#include "ops/compact/compact/compact_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> compact_cuda(const at::Tensor& x, const at::Tensor& mask,
                                                const std::optional<at::Scalar>& fill_value) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const at::Tensor fill = compact_checked_fill(x, mask, fill_value);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  const at::Tensor flags = mask.contiguous();
  auto [out, count] = compact_outputs(x);
  TorchWorkspace workspace(x.device());
  compact_cuda_launch("compact", input.const_data_ptr(), flags.const_data_ptr<bool>(), x.numel(),
                      static_cast<int>(x.element_size()), out.mutable_data_ptr(), count.mutable_data_ptr<int64_t>(),
                      fill.defined() ? fill.const_data_ptr() : nullptr, workspace, current_stream());
  return {out, count};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("compact", &compact_cuda); }

}  // namespace gpuprim
