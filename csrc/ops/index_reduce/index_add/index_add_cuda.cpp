// CUDA glue of gpuprim::index_add: checks, output, stream and workspace; kernels in index_add_cuda.cu.
// Out-of-range indices are skipped by the kernels and reported at the next call (common/input_errors.h).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/index_reduce/index_add/index_add.h"

namespace gpuprim {
namespace {

// Adds into out (contiguous, holding input's values, not overlapping index or source).
void index_add_cuda_into(at::Tensor& out, int64_t d, const at::Tensor& index, const at::Tensor& source,
                         const c10::Scalar& alpha, std::optional<bool> deterministic, const InputErrorScope& errors) {
  const IndexReduceShape shape = index_add_shape(out, d, index);
  if (shape.outer == 0 || shape.items == 0 || shape.rows == 0 || shape.inner == 0) return;
  const bool is_bool = out.scalar_type() == at::kBool;
  // Bool: bytes, or-ed in (bool_reduce); a false alpha adds `false`s, which still have their indices checked.
  const at::Tensor added = is_bool && !alpha_is_true(alpha) ? at::zeros_like(source) : source;
  const at::Tensor src = bool_as_bytes(added.contiguous());
  const at::Tensor idx = index.contiguous();
  const bool integral = at::isIntegralType(out.scalar_type(), /*includeBool=*/true);
  TorchWorkspace workspace(out.device());
  index_reduce_cuda_launch(idx.const_data_ptr(), to_dtype(idx.scalar_type()), src.const_data_ptr(),
                           to_dtype(src.scalar_type()), shape, is_bool ? bool_reduce(Reduce::kSum) : Reduce::kSum,
                           /*include_self=*/true,
                           integral ? 1.0 : alpha.toDouble(), integral && !is_bool ? alpha.toLong() : 1,
                           resolve_deterministic(deterministic),
                           errors.check(InputArg::kIndex, InputRule::kOutOfRange, shape.rows, static_cast<int>(d)),
                           nullptr, out.mutable_data_ptr(), workspace, current_stream());
}

at::Tensor index_add_cuda(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                          const c10::Scalar& alpha, std::optional<bool> deterministic) {
  const InputErrorScope errors(input.device(), InputOp::kIndexAdd);  // first: what earlier calls' kernels found
  const int64_t d = index_add_check(input, dim, index, source, alpha);
  const c10::cuda::CUDAGuard guard(input.device());
  at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
  index_add_cuda_into(out, d, index, source, alpha, deterministic, errors);
  return out;
}

void index_add_cuda_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     const c10::Scalar& alpha, std::optional<bool> deterministic) {
  const InputErrorScope errors(input.device(), InputOp::kIndexAddInPlace);
  const int64_t d = index_add_check(input, dim, index, source, alpha);
  const c10::cuda::CUDAGuard guard(input.device());
  index_reduce_in_place(input, index, source, [&](at::Tensor& out) {
    index_add_cuda_into(out, d, index, source, alpha, deterministic, errors);
  });
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { impl(m, "index_add", &index_add_cuda, "index_add_", &index_add_cuda_); }

}  // namespace gpuprim
