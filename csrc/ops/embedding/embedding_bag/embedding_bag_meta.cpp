// Shape functions of gpuprim::embedding_bag and its backward (SymInt-safe, no data access).
#include <torch/library.h>

#include "common/registration.h"
#include "ops/embedding/embedding_bag/embedding_bag.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag_meta(
    const at::Tensor& weight, const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
    c10::string_view mode, const std::optional<at::Tensor>& per_sample_weights, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  const EmbeddingBagArgs args = embedding_bag_check(weight, indices, offsets, mode, per_sample_weights, padding_idx,
                                                    include_last_offset, sparse, scale_grad_by_freq);
  return embedding_bag_outputs(weight, indices, offsets, include_last_offset, args.mode);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_backward_meta(
    const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& indices,
    const std::optional<at::Tensor>& offsets, const at::Tensor& bag_size, const at::Tensor& max_indices,
    const std::optional<at::Tensor>& per_sample_weights, c10::string_view mode, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  embedding_bag_backward_check(grad, weight, indices, offsets, bag_size, max_indices, per_sample_weights, mode,
                               padding_idx, include_last_offset, sparse, scale_grad_by_freq);
  const c10::SymInt nnz = indices.sym_numel();
  const auto long_options = indices.options().dtype(at::kLong);
  const auto weight_options = weight.options().memory_format(at::MemoryFormat::Contiguous);
  at::Tensor grad_weight =
      at::empty_symint({sparse ? nnz : weight.sym_size(0), weight.sym_size(1)}, weight_options);
  at::Tensor rows = sparse ? at::empty_symint({nnz}, long_options) : at::empty({0}, long_options);
  at::Tensor num_rows = at::empty({1}, long_options);
  at::Tensor grad_psw =
      per_sample_weights.has_value() ? at::empty_symint(per_sample_weights->sym_sizes(), weight_options) : at::empty({0}, weight_options);
  return {grad_weight, rows, num_rows, grad_psw};
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(Meta, embedding_bag, meta)

}  // namespace gpuprim
