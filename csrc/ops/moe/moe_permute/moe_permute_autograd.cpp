// Autograd of gpuprim::moe_permute. The backward is a deterministic gather-sum of each token's k rows in the
// fixed order j = 0..k-1 — exactly gpuprim::moe_unpermute without gates, a registered op (so torch.compile
// traces it and it has its own CPU/CUDA/Meta kernels).
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class MoePermuteFunction : public torch::autograd::Function<MoePermuteFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& hidden,
                            const at::Tensor& token_ids, const at::Tensor& slots) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = gpuprim::moe_permute(hidden, token_ids, slots);
    }
    ctx->save_for_backward({slots});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    return {gpuprim::moe_unpermute(grads[0], saved[0], std::nullopt), at::Tensor(), at::Tensor()};
  }
};

at::Tensor moe_permute_autograd(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots) {
  if (!autograd_needed(hidden)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::moe_permute(hidden, token_ids, slots);
  }
  return MoePermuteFunction::apply(hidden, token_ids, slots);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("moe_permute", &moe_permute_autograd); }

}  // namespace gpuprim
