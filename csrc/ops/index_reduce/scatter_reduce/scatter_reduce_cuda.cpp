// CUDA glue of gpuprim::scatter_reduce: checks, destinations (ATen), output, stream and workspace; the kernels
// are index_add's (ops/index_reduce/index_add/index_add_cuda.cu) over flattened elements. Out-of-range indices are
// skipped by the kernels and reported at the next call (common/input_errors.h).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/index_reduce/scatter_reduce/scatter_reduce.h"

namespace gpuprim {
namespace {

// Reduces into out (contiguous, holding input's values, not overlapping index or src).
void scatter_reduce_cuda_into(at::Tensor& out, const ScatterReduceArgs& args, const at::Tensor& index,
                              const at::Tensor& src, bool include_self, std::optional<bool> deterministic,
                              const InputErrorScope& errors) {
  if (index.numel() == 0 || out.numel() == 0) return;
  const at::Tensor destinations = scatter_destinations(out, args.dim, index);
  const at::Tensor values = bool_as_bytes(scatter_source(src, index));  // bool: bytes, with bool_reduce
  const at::Tensor user_index = index.contiguous().view(-1).to(at::kLong);  // reported for a bad destination
  const IndexReduceShape shape{1, index.numel(), out.numel(), 1};
  const InputCheck check =
      errors.check(InputArg::kIndex, InputRule::kOutOfRange, out.dim() == 0 ? 1 : out.size(args.dim),
                   static_cast<int>(args.dim), /*flattened=*/index.dim() > 1);
  TorchWorkspace workspace(out.device());
  const Reduce reduce = out.scalar_type() == at::kBool ? bool_reduce(args.reduce) : args.reduce;
  index_reduce_cuda_launch(destinations.const_data_ptr(), DType::kInt64, values.const_data_ptr(),
                           to_dtype(values.scalar_type()), shape, reduce, include_self, 1.0, 1,
                           resolve_deterministic(deterministic), check, user_index.const_data_ptr<int64_t>(),
                           out.mutable_data_ptr(), workspace, current_stream());
}

at::Tensor scatter_reduce_cuda(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, bool include_self, std::optional<bool> deterministic,
                               InputOp op) {
  const InputErrorScope errors(input.device(), op);  // first: what earlier calls' kernels found
  const ScatterReduceArgs args = scatter_reduce_check(input, dim, index, src, reduce, input_op_name(op));
  const c10::cuda::CUDAGuard guard(input.device());
  at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
  scatter_reduce_cuda_into(out, args, index, src, include_self, deterministic, errors);
  return out;
}

void scatter_reduce_cuda_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce, bool include_self, std::optional<bool> deterministic, InputOp op) {
  const InputErrorScope errors(input.device(), op);
  const ScatterReduceArgs args = scatter_reduce_check(input, dim, index, src, reduce, input_op_name(op));
  const c10::cuda::CUDAGuard guard(input.device());
  index_reduce_in_place(input, index, src, [&](at::Tensor& out) {
    scatter_reduce_cuda_into(out, args, index, src, include_self, deterministic, errors);
  });
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) {
  register_scatter_reduce_kernels<&scatter_reduce_cuda, &scatter_reduce_cuda_>(m);
}

}  // namespace gpuprim
