// CUDA glue of gpuprim::masked_select: compact's kernels without a fill (ops/compact/compact/compact_launch.h)
// into an x-sized scratch buffer, then the count read on the host (the sync that sizes the output) and the kept
// prefix copied out. (Counting the mask first with at::sum cast it to int64 in memory, which was slower.)
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"
#include "ops/compact/masked_select/masked_select.h"
#include "ops/compact/compact/compact_launch.h"

namespace gpuprim {
namespace {

at::Tensor masked_select_cuda(const at::Tensor& x, const at::Tensor& mask) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const auto [x_full, mask_full] = masked_select_broadcast(x, mask);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x_full.contiguous();
  const at::Tensor flags = mask_full.contiguous();
  const int64_t n = input.numel();
  if (n == 0) return at::empty({0}, x.options());
  at::Tensor scratch = at::empty({n}, x.options());
  at::Tensor count = at::empty({1}, x.options().dtype(at::kLong));
  TorchWorkspace workspace(x.device());
  compact_cuda_launch("masked_select", input.const_data_ptr(), flags.const_data_ptr<bool>(), n,
                      static_cast<int>(x.element_size()), scratch.mutable_data_ptr(), count.mutable_data_ptr<int64_t>(),
                      /*fill=*/nullptr, workspace, current_stream());
  const int64_t kept = count.item<int64_t>();  // syncs
  at::Tensor out = scratch.narrow(0, 0, kept).clone();  // its own storage of exactly the kept elements
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("masked_select", &masked_select_cuda); }

}  // namespace gpuprim
