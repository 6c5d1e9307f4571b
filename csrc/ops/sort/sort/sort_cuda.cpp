// CUDA glue of gpuprim::sort: checks, output allocation, stream and workspace; kernels in sort_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/sort/sort/sort.h"
#include "ops/sort/sort/sort_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> sort_cuda(const at::Tensor& x, int64_t dim, bool descending) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const c10::cuda::CUDAGuard guard(x.device());
  return sort_along_dim(x, dim, [descending](const at::Tensor& input, at::Tensor& values, at::Tensor& indices,
                                             int64_t rows, int64_t n) {
    if (n == 1) {  // nothing to sort
      values.copy_(input);
      indices.zero_();
      return;
    }
    TorchWorkspace workspace(input.device());
    sort_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), rows, n, descending,
                     values.mutable_data_ptr(), indices.mutable_data_ptr<int64_t>(), workspace, current_stream());
  });
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("sort", &sort_cuda); }

}  // namespace gpuprim
