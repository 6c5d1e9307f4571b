// Autograd of gpuprim::scatter_reduce, torch's formulas (ATen gather/scatter_add, no float atomics reach the
// result: counts are exact). prod divides out a factor, or recomputes a product without a zero factor (as
// torch). amax/amin share the gradient evenly among the tied values, as torch does.
// src entries outside index's shape get 0. The forward re-dispatches below autograd.
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

// grad_src of index's shape, zero-padded at the end of every dim to the shape of src (SymInt-safe).
at::Tensor pad_to(const at::Tensor& g, const at::Tensor& src) {
  std::vector<c10::SymInt> pad;
  for (int64_t k = g.dim() - 1; k >= 0; --k) {
    pad.push_back(0);
    pad.push_back(src.sym_size(k) - g.sym_size(k));
  }
  return at::constant_pad_nd_symint(g, pad, 0);
}

at::Tensor narrow_to(const at::Tensor& src, const at::Tensor& index) {
  at::Tensor s = src;
  for (int64_t k = 0; k < src.dim(); ++k) {
    s = s.narrow_symint(k, 0, index.sym_size(k));
  }
  return s;
}

class ScatterReduceFunction : public torch::autograd::Function<ScatterReduceFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, int64_t dim,
                            const at::Tensor& index, const at::Tensor& src, c10::string_view reduce, bool include_self,
                            std::optional<bool> deterministic) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = gpuprim::scatter_reduce(input, dim, index, src, reduce, include_self, deterministic);
    }
    // prod needs them too (torch's formula recomputes the products that exclude a zero).
    const bool extreme = reduce == "amax" || reduce == "amin" || reduce == "prod";
    ctx->saved_data["dim"] = input.dim() == 0 ? int64_t(0) : (dim < 0 ? dim + input.dim() : dim);
    ctx->saved_data["reduce"] = std::string(reduce);
    ctx->saved_data["include_self"] = include_self;
    // src itself only when its gradient needs its values (amax/amin) or its shape (index smaller than src).
    const bool padded = !index.sym_sizes().equals(src.sym_sizes());
    ctx->saved_data["padded"] = padded;
    ctx->save_for_backward(
        {index, extreme ? input : at::Tensor(), extreme || padded ? src : at::Tensor(), extreme ? out : at::Tensor()});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& index = saved[0];
    const at::Tensor& grad = grads[0];
    const int64_t dim = ctx->saved_data["dim"].toInt();
    const std::string reduce = ctx->saved_data["reduce"].toStringRef();
    const bool include_self = ctx->saved_data["include_self"].toBool();
    const at::Tensor idx = index.to(at::kLong);
    at::Tensor grad_self, grad_src;
    if (reduce == "sum") {
      grad_self = grad;
      grad_src = grad.gather(dim, idx);
    } else if (reduce == "mean") {
      at::Tensor n = include_self ? at::ones_like(grad) : at::zeros_like(grad);
      n = n.scatter_add(dim, idx, at::ones(idx.sizes(), grad.options()));
      n = at::where(n == 0, at::ones_like(n), n);
      grad_self = grad / n;
      grad_src = grad.gather(dim, idx) / n.gather(dim, idx);
    } else if (reduce == "prod") {  // torch's formula: a product without a zero factor is recomputed with it as 1
      const at::Tensor& self = saved[1];
      const at::Tensor src = narrow_to(saved[2], index);
      const at::Tensor& result = saved[3];
      const at::Tensor masked_self = self.masked_fill(self == 0, 1);
      grad_self = grad * gpuprim::scatter_reduce(masked_self, dim, index, src, "prod", include_self) / masked_self;
      const at::Tensor src_zero = src == 0;
      const at::Tensor src_zeros = at::zeros_like(self).scatter_add(dim, idx, src_zero.to(self.scalar_type()));
      const at::Tensor src_single_zero = src_zero & (src_zeros.gather(dim, idx) == 1);
      const at::Tensor masked_src_result =
          gpuprim::scatter_reduce(self, dim, index, src.masked_fill(src_single_zero, 1), "prod", include_self);
      grad_src = at::where(src_single_zero, (grad * masked_src_result).gather(dim, idx),
                           (grad * result).gather(dim, idx) / src.masked_fill(src_zero, 1));
    } else {  // amax / amin
      const at::Tensor& self = saved[1];
      const at::Tensor src = narrow_to(saved[2], index);
      const at::Tensor& result = saved[3];
      const at::Tensor value = result.gather(dim, idx);
      const at::Tensor self_is_result = (self == result).to(grad.scalar_type());
      const at::Tensor src_is_result = (src == value).to(grad.scalar_type());
      const at::Tensor n = self_is_result.scatter_add(dim, idx, src_is_result);
      const at::Tensor grad_distributed = grad / n;
      grad_self = self_is_result * grad_distributed;
      grad_src = src_is_result * grad_distributed.gather(dim, idx);
    }
    if (!include_self) grad_self = grad_self.scatter(dim, idx, 0);
    if (ctx->saved_data["padded"].toBool()) grad_src = pad_to(grad_src, saved[2]);
    return {grad_self, at::Tensor(), at::Tensor(), grad_src, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// scatter_add: scatter_reduce's "sum" gradient (grad to input, grad gathered at index to src).
class ScatterAddFunction : public torch::autograd::Function<ScatterAddFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, int64_t dim,
                            const at::Tensor& index, const at::Tensor& src, std::optional<bool> deterministic) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = gpuprim::scatter_add(input, dim, index, src, deterministic);
    }
    ctx->saved_data["dim"] = input.dim() == 0 ? int64_t(0) : (dim < 0 ? dim + input.dim() : dim);
    const bool padded = !index.sym_sizes().equals(src.sym_sizes());
    ctx->saved_data["padded"] = padded;
    ctx->save_for_backward({index, padded ? src : at::Tensor()});
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    at::Tensor grad_src = grads[0].gather(ctx->saved_data["dim"].toInt(), saved[0].to(at::kLong));
    if (ctx->saved_data["padded"].toBool()) grad_src = pad_to(grad_src, saved[1]);
    return {grads[0], at::Tensor(), at::Tensor(), grad_src, at::Tensor()};
  }
};

at::Tensor scatter_reduce_autograd(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                   c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  if (!autograd_needed(input) && !autograd_needed(src)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::scatter_reduce(input, dim, index, src, reduce, include_self, deterministic);
  }
  return ScatterReduceFunction::apply(input, dim, index, src, reduce, include_self, deterministic);
}

// The in-place variant is not differentiable: an immediate error if autograd would need it (a gradient or a
// forward-mode tangent); otherwise it runs below autograd and bumps input's version counter.
void scatter_reduce_autograd_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                              c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  TORCH_CHECK(!autograd_needed(input) && !autograd_needed(src),
              "gpuprim.scatter_reduce_: the in-place variant is not differentiable; use gpuprim.scatter_reduce");
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    gpuprim::scatter_reduce_(const_cast<at::Tensor&>(input), dim, index, src, reduce, include_self, deterministic);
  }
  input.unsafeGetTensorImpl()->bump_version();
}

at::Tensor scatter_add_autograd(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                std::optional<bool> deterministic) {
  if (!autograd_needed(input) && !autograd_needed(src)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::scatter_add(input, dim, index, src, deterministic);
  }
  return ScatterAddFunction::apply(input, dim, index, src, deterministic);
}

void scatter_add_autograd_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                           std::optional<bool> deterministic) {
  TORCH_CHECK(!autograd_needed(input) && !autograd_needed(src),
              "gpuprim.scatter_add_: the in-place variant is not differentiable; use gpuprim.scatter_add");
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    gpuprim::scatter_add_(const_cast<at::Tensor&>(input), dim, index, src, deterministic);
  }
  input.unsafeGetTensorImpl()->bump_version();
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "scatter_add", &scatter_add_autograd,
       "scatter_add_", &scatter_add_autograd_,
       "scatter_reduce", &scatter_reduce_autograd,
       "scatter_reduce_", &scatter_reduce_autograd_);
}

}  // namespace gpuprim
