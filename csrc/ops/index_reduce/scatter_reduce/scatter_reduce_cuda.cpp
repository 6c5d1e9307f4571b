// CUDA glue of gpuprim::scatter_reduce: checks, destinations (ATen), output, stream and workspace; the kernels
// are index_add's (ops/index_add/index_add_cuda.cu) over flattened elements. Out-of-range indices are skipped
// (the Python wrapper raises IndexError in validate mode).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/index_reduce/scatter_reduce/scatter_reduce.h"

namespace gpuprim {
namespace {

// Reduces into out (contiguous, holding input's values, not overlapping index or src).
void scatter_reduce_cuda_into(at::Tensor& out, const ScatterReduceArgs& args, const at::Tensor& index,
                              const at::Tensor& src, bool include_self, std::optional<bool> deterministic) {
  if (index.numel() == 0 || out.numel() == 0) return;
  const at::Tensor destinations = scatter_destinations(out, args.dim, index);
  const at::Tensor values = scatter_source(src, index);
  const IndexReduceShape shape{1, index.numel(), out.numel(), 1};
  TorchWorkspace workspace(out.device());
  index_reduce_cuda_launch(destinations.const_data_ptr(), DType::kInt64, values.const_data_ptr(),
                           to_dtype(values.scalar_type()), shape, args.reduce, include_self, 1.0, 1,
                           resolve_deterministic(deterministic), out.mutable_data_ptr(), workspace, current_stream());
}

at::Tensor scatter_reduce_cuda(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  const ScatterReduceArgs args = scatter_reduce_check(input, dim, index, src, reduce);
  const c10::cuda::CUDAGuard guard(input.device());
  at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
  scatter_reduce_cuda_into(out, args, index, src, include_self, deterministic);
  return out;
}

void scatter_reduce_cuda_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  const ScatterReduceArgs args = scatter_reduce_check(input, dim, index, src, reduce);
  const c10::cuda::CUDAGuard guard(input.device());
  at::Tensor self = input;
  if (input.is_contiguous() && !input.is_alias_of(src) && !input.is_alias_of(index)) {
    scatter_reduce_cuda_into(self, args, index, src, include_self, deterministic);
  } else {
    at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
    scatter_reduce_cuda_into(out, args, index, src, include_self, deterministic);
    self.copy_(out);
  }
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) {
  m.impl("scatter_reduce", &scatter_reduce_cuda);
  m.impl("scatter_reduce_", &scatter_reduce_cuda_);
}

}  // namespace gpuprim
