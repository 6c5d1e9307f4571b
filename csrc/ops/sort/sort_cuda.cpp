// CUDA glue of gpuprim::sort: checks, output allocation, stream and workspace; kernels in sort_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/sort/sort.h"
#include "ops/sort/sort_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> sort_cuda(const at::Tensor& x, int64_t dim, bool descending) {
  dim = sort_check(x, dim);
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor values = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor indices = at::empty(x.sizes(), x.options().dtype(at::kLong).memory_format(at::MemoryFormat::Contiguous));
  if (x.numel() == 0) return {values, indices};
  // The kernels sort the rows of a contiguous [rows, n] layout: move `dim` last, and back after.
  const bool last = x.dim() == 0 || dim == x.dim() - 1;
  const at::Tensor input = last ? x.contiguous() : x.movedim(dim, -1).contiguous();
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  at::Tensor sorted_values = last ? values : at::empty(input.sizes(), input.options());
  at::Tensor sorted_indices = last ? indices : at::empty(input.sizes(), input.options().dtype(at::kLong));
  if (n == 1) {  // nothing to sort
    sorted_values.copy_(input);
    sorted_indices.zero_();
  } else {
    TorchWorkspace workspace(input.device());
    sort_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), input.numel() / n, n, descending,
                     sorted_values.mutable_data_ptr(), sorted_indices.mutable_data_ptr<int64_t>(), workspace,
                     current_stream());
  }
  if (!last) {
    values.copy_(sorted_values.movedim(-1, dim));
    indices.copy_(sorted_indices.movedim(-1, dim));
  }
  return {values, indices};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("sort", &sort_cuda); }

}  // namespace gpuprim
