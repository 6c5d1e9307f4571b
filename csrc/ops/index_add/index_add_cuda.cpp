// CUDA glue of gpuprim::index_add: checks, output, stream and workspace; kernels in index_add_cuda.cu.
// Out-of-range indices are skipped by the kernels (the Python wrapper raises IndexError in validate mode).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/index_add/index_add.h"

namespace gpuprim {
namespace {

at::Tensor index_add_cuda(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                          const c10::Scalar& alpha, std::optional<bool> deterministic) {
  const int64_t d = index_add_check(input, dim, index, source, alpha);
  const c10::cuda::CUDAGuard guard(input.device());
  at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
  const IndexReduceShape shape = index_add_shape(input, d, index);
  if (shape.outer == 0 || shape.items == 0 || shape.rows == 0 || shape.inner == 0) return out;
  const at::Tensor src = source.contiguous(), idx = index.contiguous();
  const bool integral = at::isIntegralType(input.scalar_type(), /*includeBool=*/false);
  TorchWorkspace workspace(input.device());
  index_reduce_cuda_launch(idx.const_data_ptr(), to_dtype(idx.scalar_type()), src.const_data_ptr(),
                           to_dtype(src.scalar_type()), shape, IndexReduce::kSum, /*include_self=*/true,
                           integral ? 1.0 : alpha.toDouble(), integral ? alpha.toLong() : 1,
                           resolve_deterministic(deterministic), out.mutable_data_ptr(), workspace, current_stream());
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("index_add", &index_add_cuda); }

}  // namespace gpuprim
