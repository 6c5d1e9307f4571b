// Autograd of gpuprim::compact. out[k] = x.flatten()[p_k] for the k-th kept position p_k, so the
// gradient of x at a kept position i is grad_out[(number of kept positions before i)], and zero at
// dropped positions; count has no gradient. Backward is built from ATen ops (cumsum, gather,
// where): no host sync, and itself differentiable (double backward works).
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class CompactFunction : public torch::autograd::Function<CompactFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                                                const at::Tensor& mask, const std::optional<at::Scalar>& fill_value) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [out, count] = gpuprim::compact(x, mask, fill_value);
    ctx->save_for_backward({mask});
    return with_integer_outputs(ctx, {out}, {count});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (!grads[0].defined()) return torch::autograd::variable_list(3);  // no gradient reached the output
    const at::Tensor& grad_out = grads[0];
    const at::Tensor mask = ctx->get_saved_variables()[0];
    const at::Tensor flags = mask.reshape({-1});
    // Slot of each kept element in out: the number of kept elements before it.
    const at::Tensor slot = (at::cumsum(flags, 0, at::kLong) - 1).clamp_min(0);
    const at::Tensor grad_x = at::where(flags, grad_out.index_select(0, slot), at::zeros({}, grad_out.options()));
    return {grad_x.reshape_symint(mask.sym_sizes()), at::Tensor(), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> compact_autograd(const at::Tensor& x, const at::Tensor& mask,
                                                    const std::optional<at::Scalar>& fill_value) {
  if (!autograd_needed(x)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::compact(x, mask, fill_value);
  }
  return as_tuple<2>(CompactFunction::apply(x, mask, fill_value));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("compact", &compact_autograd); }

}  // namespace gpuprim
