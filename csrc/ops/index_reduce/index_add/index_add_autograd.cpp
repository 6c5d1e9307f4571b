// Autograd of gpuprim::index_add, as torch's: grad_input = grad, grad_source = alpha * grad.index_select(dim,
// index) (both deterministic: no reduction). The forward re-dispatches below autograd.
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class IndexAddFunction : public torch::autograd::Function<IndexAddFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, int64_t dim,
                            const at::Tensor& index, const at::Tensor& source, const c10::Scalar& alpha,
                            std::optional<bool> deterministic) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = gpuprim::index_add(input, dim, index, source, alpha, deterministic);
    }
    ctx->saved_data["dim"] = dim;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["source_0d"] = source.dim() == 0;  // (no sizes: they may be symbolic)
    ctx->save_for_backward({index});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor index = ctx->get_saved_variables()[0];
    const at::Tensor& grad = grads[0];
    const int64_t dim = ctx->saved_data["dim"].toInt();
    const c10::Scalar alpha = ctx->saved_data["alpha"].toScalar();
    at::Tensor grad_source;
    if (grad.dim() == 0) {
      grad_source = grad.reshape({1}).index_select(0, index.reshape({-1}));
    } else {
      grad_source = grad.index_select(dim, index.reshape({-1}));
    }
    if (!(alpha.isIntegral(false) && alpha.toLong() == 1)) grad_source = grad_source * alpha;
    if (ctx->saved_data["source_0d"].toBool()) grad_source = grad_source.reshape({});
    return {grad, at::Tensor(), at::Tensor(), grad_source, at::Tensor(), at::Tensor()};
  }
};

at::Tensor index_add_autograd(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                              const c10::Scalar& alpha, std::optional<bool> deterministic) {
  if (!autograd_needed(input) && !autograd_needed(source)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::index_add(input, dim, index, source, alpha, deterministic);
  }
  return IndexAddFunction::apply(input, dim, index, source, alpha, deterministic);
}

// The in-place variant is not differentiable: an immediate error if autograd would need it (a gradient or a
// forward-mode tangent); otherwise it runs below autograd and bumps input's version counter (saved tensors then
// catch the mutation).
void index_add_autograd_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                         const c10::Scalar& alpha, std::optional<bool> deterministic) {
  TORCH_CHECK(!autograd_needed(input) && !autograd_needed(source),
              "gpuprim.index_add_: the in-place variant is not differentiable; use gpuprim.index_add");
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    gpuprim::index_add_(const_cast<at::Tensor&>(input), dim, index, source, alpha, deterministic);
  }
  input.unsafeGetTensorImpl()->bump_version();
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "index_add", &index_add_autograd,
       "index_add_", &index_add_autograd_);
}

}  // namespace gpuprim
