// Autograd of gpuprim::cumsum. The gradient of a scan is the scan of the gradient in the
// other direction (same exclusive flag), so backward is gpuprim::cumsum again.
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class CumsumFunction : public torch::autograd::Function<CumsumFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, int64_t dim, bool exclusive,
                            bool reverse) {
    ctx->saved_data["dim"] = dim;
    ctx->saved_data["exclusive"] = exclusive;
    ctx->saved_data["reverse"] = reverse;
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::cumsum(x, dim, exclusive, reverse);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor grad_x =
        gpuprim::cumsum(grads[0], ctx->saved_data["dim"].toInt(), ctx->saved_data["exclusive"].toBool(),
                        !ctx->saved_data["reverse"].toBool());
    return {grad_x, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor cumsum_autograd(const at::Tensor& x, int64_t dim, bool exclusive, bool reverse) {
  if (!autograd_needed(x)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::cumsum(x, dim, exclusive, reverse);
  }
  return CumsumFunction::apply(x, dim, exclusive, reverse);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("cumsum", &cumsum_autograd); }

}  // namespace gpuprim
