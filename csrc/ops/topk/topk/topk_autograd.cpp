// Autograd of gpuprim::topk. values = x gathered at indices along dim, so the gradient of x is the
// gradient of values scattered back to those positions (zeros elsewhere): the registered op
// gpuprim::topk_backward (CPU/CUDA/Meta kernels), so torch.compile traces it. indices have no gradient.
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class TopkFunction : public torch::autograd::Function<TopkFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                                                c10::SymInt k, int64_t dim, bool largest, bool sorted) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [values, indices] = gpuprim::topk_symint(x, k, dim, largest, sorted);
    ctx->saved_data["sizes"] = x.sym_sizes();
    ctx->saved_data["dim"] = dim;
    ctx->save_for_backward({indices});
    return with_integer_outputs(ctx, {values}, {indices});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (!grads[0].defined()) return torch::autograd::variable_list(5);  // no gradient reached the output
    const at::Tensor indices = ctx->get_saved_variables()[0];
    const auto sizes = ctx->saved_data["sizes"].toSymIntVector();
    at::Tensor grad_x = gpuprim::topk_backward(grads[0], indices, sizes, ctx->saved_data["dim"].toInt());
    return {grad_x, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> topk_autograd(const at::Tensor& x, c10::SymInt k, int64_t dim, bool largest,
                                                 bool sorted) {
  if (!autograd_needed(x)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::topk_symint(x, std::move(k), dim, largest, sorted);
  }
  return as_tuple<2>(TopkFunction::apply(x, std::move(k), dim, largest, sorted));
}

}  // namespace

// The backward op is not differentiable itself (no double backward): a clear error if someone asks for one.
TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "topk", &topk_autograd,
       "topk_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
