// Autograd of gpuprim::embedding_bag. The forward re-dispatches below autograd; the backward is its own
// registered op (gpuprim::embedding_bag_backward, with CPU/CUDA/Meta kernels) so torch.compile traces it.
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

std::optional<at::Tensor> maybe(const at::Tensor& t) {
  return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
}

class EmbeddingBagFunction : public torch::autograd::Function<EmbeddingBagFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& weight,
                                                const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
                                                c10::string_view mode,
                                                const std::optional<at::Tensor>& per_sample_weights,
                                                std::optional<int64_t> padding_idx, bool include_last_offset,
                                                bool sparse, bool scale_grad_by_freq) {
    at::Tensor out, bag_size, max_indices;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      std::tie(out, bag_size, max_indices) =
          gpuprim::embedding_bag(weight, indices, offsets, mode, per_sample_weights, padding_idx, include_last_offset,
                                 sparse, scale_grad_by_freq);
    }
    ctx->saved_data["mode"] = std::string(mode);
    ctx->saved_data["padding_idx"] = padding_idx.has_value() ? c10::IValue(*padding_idx) : c10::IValue();
    ctx->saved_data["include_last_offset"] = include_last_offset;
    ctx->saved_data["sparse"] = sparse;
    ctx->saved_data["scale_grad_by_freq"] = scale_grad_by_freq;
    // weight is needed only for the gradient of per_sample_weights (and for its shape and dtype).
    ctx->save_for_backward({weight, indices, offsets.value_or(at::Tensor()), bag_size, max_indices,
                            per_sample_weights.value_or(at::Tensor())});
    return with_integer_outputs(ctx, {out}, {bag_size, max_indices});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (!grads[0].defined()) return torch::autograd::variable_list(9);  // no gradient reached the output
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& weight = saved[0];
    const c10::IValue padding = ctx->saved_data["padding_idx"];
    const std::optional<int64_t> padding_idx =
        padding.isNone() ? std::nullopt : std::optional<int64_t>(padding.toInt());
    const bool sparse = ctx->saved_data["sparse"].toBool();
    auto [grad_weight, rows, num_rows, grad_psw] = gpuprim::embedding_bag_backward(
        grads[0], weight, saved[1], maybe(saved[2]), saved[3], saved[4], maybe(saved[5]),
        ctx->saved_data["mode"].toStringRef(), padding_idx, ctx->saved_data["include_last_offset"].toBool(), sparse,
        ctx->saved_data["scale_grad_by_freq"].toBool());
    if (sparse) {
      // Row-sparse gradient: the distinct rows (sorted) and their gradient rows. Sizing it reads num_rows on
      // the host (a sync, as torch's sparse embedding gradient).
      const int64_t n = num_rows.item<int64_t>();
      grad_weight = at::_sparse_coo_tensor_unsafe(rows.narrow(0, 0, n).unsqueeze(0), grad_weight.narrow(0, 0, n),
                                                  weight.sizes(), weight.options().layout(at::kSparse))
                        ._coalesced_(true);
    }
    return {grad_weight,  at::Tensor(), at::Tensor(), at::Tensor(), saved[5].defined() ? grad_psw : at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag_autograd(
    const at::Tensor& weight, const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
    c10::string_view mode, const std::optional<at::Tensor>& per_sample_weights, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  if (!autograd_needed(weight) && !autograd_needed(per_sample_weights)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::embedding_bag(weight, indices, offsets, mode, per_sample_weights, padding_idx, include_last_offset,
                                  sparse, scale_grad_by_freq);
  }
  return as_tuple<3>(EmbeddingBagFunction::apply(weight, indices, offsets, mode, per_sample_weights, padding_idx,
                                                 include_last_offset, sparse, scale_grad_by_freq));
}

}  // namespace

// The backward op is not differentiable itself (no double backward): a clear error if someone asks for one.
TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "embedding_bag", &embedding_bag_autograd,
       "embedding_bag_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
