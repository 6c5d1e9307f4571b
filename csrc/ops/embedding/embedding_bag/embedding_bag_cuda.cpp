// CUDA glue of gpuprim::embedding_bag and its backward: checks, outputs, stream and workspace; kernels in
// embedding_bag_cuda.cu (its radix sorts: prim/radix_sort.cuh).
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/embedding/embedding_bag/embedding_bag.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag_cuda(
    const at::Tensor& weight, const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
    c10::string_view mode, const std::optional<at::Tensor>& per_sample_weights, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  const InputErrorScope errors(weight.device(), InputOp::kEmbeddingBag);  // first: what earlier calls found
  const EmbeddingBagArgs args = embedding_bag_check(weight, indices, offsets, mode, per_sample_weights, padding_idx,
                                                    include_last_offset, sparse, scale_grad_by_freq);
  const c10::cuda::CUDAGuard guard(weight.device());
  const at::Tensor w = weight.contiguous(), idx = indices.contiguous().view(-1);
  const bool max = args.mode == EmbeddingBagMode::kMax;
  at::Tensor out, bag_size, max_indices;
  std::tie(out, bag_size, max_indices) =
      embedding_bag_outputs(weight, indices, offsets, include_last_offset, args.mode);
  const int64_t bags = out.size(0);
  if (bags == 0) return {out, bag_size, max_indices};
  const at::Tensor bounds = embedding_bag_bounds(indices, offsets, include_last_offset);
  const at::Tensor psw = per_sample_weights.has_value() ? per_sample_weights->contiguous().view(-1) : at::Tensor();
  const EmbeddingBagChecks checks{
      errors.check(InputArg::kIndices, InputRule::kOutOfRange, w.size(0), 0, /*flattened=*/indices.dim() > 1),
      errors.check(InputArg::kOffsets, InputRule::kNotAtEnd, idx.numel()), offsets.has_value(), include_last_offset};
  TorchWorkspace workspace(w.device());
  embedding_bag_cuda_launch(w.const_data_ptr(), to_dtype(w.scalar_type()), idx.const_data_ptr(),
                            to_dtype(idx.scalar_type()), bounds.const_data_ptr<int64_t>(),
                            psw.defined() ? psw.const_data_ptr() : nullptr,
                            embedding_bag_shape(w, idx, bags, args.padding_idx), args.mode, checks,
                            out.mutable_data_ptr(),
                            bag_size.mutable_data_ptr<int64_t>(),
                            max ? max_indices.mutable_data_ptr<int64_t>() : nullptr, workspace, current_stream());
  return {out, bag_size, max_indices};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_backward_cuda(
    const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& indices,
    const std::optional<at::Tensor>& offsets, const at::Tensor& bag_size, const at::Tensor& max_indices,
    const std::optional<at::Tensor>& per_sample_weights, c10::string_view mode, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  check_input_errors(weight.device());  // the forward's kernels recorded this call's bad data, if any
  const EmbeddingBagArgs args = embedding_bag_backward_check(grad, weight, indices, offsets, bag_size, max_indices,
                                                             per_sample_weights, mode, padding_idx,
                                                             include_last_offset, sparse, scale_grad_by_freq);
  const c10::cuda::CUDAGuard guard(weight.device());
  const int64_t bags = grad.size(0), dim = weight.size(1), nnz = indices.numel();
  const at::Tensor w = weight.contiguous(), idx = indices.contiguous().view(-1), g = grad.contiguous();
  const auto long_options = idx.options().dtype(at::kLong);
  const bool work = bags != 0 && dim != 0 && nnz != 0 && weight.size(0) != 0;
  // sum/mean: the kernels write every row once (dense: zeros included; sparse: the distinct rows, then zeros past
  // num_rows), so no separate zero fill. max: rows that get no gradient stay zero.
  const bool every_row_written = work && args.mode != EmbeddingBagMode::kMax;
  const std::vector<int64_t> grad_weight_size{sparse ? nnz : weight.size(0), dim};
  at::Tensor grad_weight =
      every_row_written ? at::empty(grad_weight_size, w.options()) : at::zeros(grad_weight_size, w.options());
  at::Tensor rows = every_row_written && sparse ? at::empty({nnz}, long_options)
                                                : at::zeros({sparse ? nnz : 0}, long_options);
  // The kernels write num_rows (sum/mean) and every element of grad_psw when there is work: no fills then.
  at::Tensor num_rows = work && args.mode != EmbeddingBagMode::kMax ? at::empty({1}, long_options)
                                                                     : at::zeros({1}, long_options);
  const bool with_psw = per_sample_weights.has_value();
  at::Tensor grad_psw = !with_psw ? at::zeros({0}, w.options())
                        : work    ? at::empty(per_sample_weights->sizes(), w.options())
                                  : at::zeros(per_sample_weights->sizes(), w.options());
  if (!work) return {grad_weight, rows, num_rows, grad_psw};
  const at::Tensor bounds = embedding_bag_bounds(indices, offsets, include_last_offset);
  const at::Tensor psw = with_psw ? per_sample_weights->contiguous().view(-1) : at::Tensor();
  const at::Tensor sizes = bag_size.contiguous(), argmax = max_indices.contiguous();
  TorchWorkspace workspace(w.device());
  embedding_bag_backward_cuda_launch(
      g.const_data_ptr(), w.const_data_ptr(), to_dtype(w.scalar_type()), idx.const_data_ptr(),
      to_dtype(idx.scalar_type()), bounds.const_data_ptr<int64_t>(), sizes.const_data_ptr<int64_t>(),
      args.mode == EmbeddingBagMode::kMax ? argmax.const_data_ptr<int64_t>() : nullptr,
      with_psw ? psw.const_data_ptr() : nullptr, embedding_bag_shape(w, idx, bags, args.padding_idx), args.mode,
      sparse, scale_grad_by_freq, grad_weight.mutable_data_ptr(), sparse ? rows.mutable_data_ptr<int64_t>() : nullptr,
      num_rows.mutable_data_ptr<int64_t>(), with_psw ? grad_psw.mutable_data_ptr() : nullptr, workspace,
      current_stream());
  return {grad_weight, rows, num_rows, grad_psw};
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(CUDA, embedding_bag, cuda)

}  // namespace gpuprim
