// CUDA glue of gpuprim::topk: device guard, stream and workspace around the row kernels (topk_cuda.cu); checks,
// outputs and the move of `dim` are topk_along_dim's (topk.cpp).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/topk/topk/topk.h"
#include "ops/topk/topk/topk_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> topk_cuda(const at::Tensor& x, int64_t k, int64_t dim, bool largest,
                                             bool /*sorted*/) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const c10::cuda::CUDAGuard guard(x.device());
  return topk_along_dim(x, k, dim, largest,
                        [](const at::Tensor& input, at::Tensor& values, at::Tensor& indices, int64_t rows, int64_t n,
                           int64_t k, bool largest) {
                          TorchWorkspace workspace(input.device());
                          topk_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), rows, n, k, largest,
                                           values.mutable_data_ptr(), indices.mutable_data_ptr<int64_t>(), workspace,
                                           current_stream());
                        });
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { impl(m, "topk", &topk_cuda, "topk_backward", &topk_backward_any_device); }

}  // namespace gpuprim
