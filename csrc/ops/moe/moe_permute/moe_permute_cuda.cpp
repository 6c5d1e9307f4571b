// CUDA glue of gpuprim::moe_permute: checks, output, stream; the row-copy kernel is in moe_permute_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/moe/moe_permute/moe_permute.h"
#include "ops/moe/moe_permute/moe_permute_launch.h"

namespace gpuprim {
namespace {

at::Tensor moe_permute_cuda(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots) {
  const InputErrorScope errors(hidden.device(), InputOp::kMoePermute);
  moe_permute_check(hidden, token_ids, slots);
  const c10::cuda::CUDAGuard guard(hidden.device());
  const at::Tensor input = hidden.contiguous();
  const at::Tensor ids = token_ids.contiguous();
  at::Tensor out = at::empty({ids.size(0), input.size(1)}, input.options());
  if (out.numel() == 0) return out;
  moe_permute_cuda_launch(input.const_data_ptr(), input.size(0), input.size(1) * input.element_size(),
                          ids.const_data_ptr<int64_t>(), ids.size(0),
                          errors.check(InputArg::kTokenIds, InputRule::kOutOfRange, input.size(0)),
                          out.mutable_data_ptr(), current_stream());
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("moe_permute", &moe_permute_cuda); }

}  // namespace gpuprim
