// Autograd of gpuprim::masked_select: out = the elements of x where mask is set, in order, so the gradient of x
// puts grad_out's elements back at those positions (masked_scatter) and zero elsewhere, summed over the dims
// x was broadcast along. Built from ATen ops:
// itself differentiable. (The fake kernel, whose size is data-dependent, is registered from Python:
// torch_ops/gpuprim/masked_select.py.)
#include <ATen/ExpandUtils.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class MaskedSelectFunction : public torch::autograd::Function<MaskedSelectFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& mask) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({mask});
    ctx->saved_data["sizes"] = x.sym_sizes();
    return gpuprim::masked_select(x, mask);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor mask = ctx->get_saved_variables()[0];
    const auto sizes = ctx->saved_data["sizes"].toSymIntVector();
    // Over the broadcast shape of x and mask, then summed back to x's shape (as torch's backward).
    const at::Tensor grad_full =
        at::zeros_symint(at::infer_size_symdimvector(sizes, mask.sym_sizes()), grads[0].options())
            .masked_scatter(mask, grads[0]);
    const at::Tensor grad_x = at::sum_to(grad_full, sizes);
    return {grad_x, at::Tensor()};
  }
};

at::Tensor masked_select_autograd(const at::Tensor& x, const at::Tensor& mask) {
  if (!autograd_needed(x)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::masked_select(x, mask);
  }
  return MaskedSelectFunction::apply(x, mask);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("masked_select", &masked_select_autograd); }

}  // namespace gpuprim
