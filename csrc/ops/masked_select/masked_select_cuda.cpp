// CUDA glue of gpuprim::masked_select: counts the set flags (the host sync: the output's size), then compact's
// kernel (ops/compact/compact_launch.h) without a fill writes exactly that many elements into the output.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/compact/compact.h"
#include "ops/compact/compact_launch.h"

namespace gpuprim {
namespace {

at::Tensor masked_select_cuda(const at::Tensor& x, const at::Tensor& mask) {
  compact_check(x, mask, "masked_select");
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  const at::Tensor flags = mask.contiguous();
  const int64_t kept = x.numel() == 0 ? 0 : flags.sum(at::kLong).item<int64_t>();  // syncs
  at::Tensor out = at::empty({kept}, x.options());
  if (kept == 0) return out;
  at::Tensor count = at::empty({1}, x.options().dtype(at::kLong));
  TorchWorkspace workspace(x.device());
  compact_cuda_launch(input.const_data_ptr(), flags.const_data_ptr<bool>(), x.numel(),
                      static_cast<int>(x.element_size()), out.mutable_data_ptr(), count.mutable_data_ptr<int64_t>(),
                      /*fill=*/nullptr, workspace, current_stream());
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("masked_select", &masked_select_cuda); }

}  // namespace gpuprim
