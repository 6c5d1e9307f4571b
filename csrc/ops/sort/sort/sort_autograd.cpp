// Autograd of gpuprim::sort. values = x gathered at indices along dim (a permutation), so the
// gradient of x scatters the gradient of values back to the positions they came from; indices
// have no gradient. Backward uses ATen's scatter (itself differentiable: double backward works).
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class SortFunction : public torch::autograd::Function<SortFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, int64_t dim,
                                                bool descending) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [values, indices] = gpuprim::sort(x, dim, descending);
    ctx->saved_data["dim"] = dim;
    ctx->save_for_backward({indices});
    return with_integer_outputs(ctx, {values}, {indices});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (!grads[0].defined()) return torch::autograd::variable_list(3);  // no gradient reached the output
    const at::Tensor& grad_values = grads[0];
    const at::Tensor indices = ctx->get_saved_variables()[0];
    at::Tensor grad_x = grad_values.dim() == 0
                            ? grad_values  // a 0-d sort is the identity
                            : at::zeros_like(grad_values).scatter(ctx->saved_data["dim"].toInt(), indices, grad_values);
    return {grad_x, at::Tensor(), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> sort_autograd(const at::Tensor& x, int64_t dim, bool descending) {
  if (!autograd_needed(x)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::sort(x, dim, descending);
  }
  return as_tuple<2>(SortFunction::apply(x, dim, descending));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("sort", &sort_autograd); }

}  // namespace gpuprim
