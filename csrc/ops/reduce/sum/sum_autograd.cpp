// Autograd of gpuprim::sum and gpuprim::mean: the gradient of x is the output gradient broadcast
// back over the reduced dims (divided by the number of reduced values for mean), in x's dtype.
// Backward uses only aten ops (unsqueeze, expand, div, to), so it is itself differentiable.
#include <torch/autograd.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"
#include "ops/reduce/sum/sum.h"

namespace gpuprim {
namespace {

class SumFunction : public torch::autograd::Function<SumFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype,
                            bool mean) {
    const SumPlan plan = sum_check(sum_op_name(mean), x, dim, dtype);
    std::vector<int64_t> reduced;
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (plan.reduced[d]) reduced.push_back(d);
    }
    ctx->saved_data["reduced"] = reduced;
    ctx->saved_data["keepdim"] = keepdim;
    ctx->saved_data["mean"] = mean;
    ctx->saved_data["sizes"] = x.sym_sizes();
    ctx->saved_data["dtype"] = x.scalar_type();
    at::AutoDispatchBelowADInplaceOrView guard;
    return mean ? gpuprim::mean(x, dim, keepdim, dtype) : gpuprim::sum(x, dim, keepdim, dtype);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto reduced = ctx->saved_data["reduced"].toIntVector();
    const auto sizes = ctx->saved_data["sizes"].toSymIntVector();
    at::Tensor grad = grads[0];
    if (!ctx->saved_data["keepdim"].toBool()) {
      for (const int64_t d : reduced) grad = grad.unsqueeze(d);  // increasing order: positions stay right
    }
    grad = grad.expand_symint(sizes);
    if (ctx->saved_data["mean"].toBool()) {
      c10::SymInt count = 1;
      for (const int64_t d : reduced) count = count * sizes[d];
      grad = grad.div(c10::Scalar(count));
    }
    grad = grad.to(ctx->saved_data["dtype"].toScalarType());
    return {grad, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// No gradient needed: straight to the kernel, skipping the graph node and its saved state (a few
// microseconds, which is most of a small input's latency; benchmarks/bench_sum.py fp32_1000).
template <bool kMean>
at::Tensor sum_autograd(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  // An integral dtype gives an integer result, which has no gradient (as in torch).
  const bool differentiable = !dtype.has_value() || at::isFloatingType(*dtype);
  if (autograd_needed(x) && differentiable) {  // a tangent too: the Function refuses it rather than drop it
    return SumFunction::apply(x, dim, keepdim, dtype, kMean);
  }
  at::AutoDispatchBelowADInplaceOrView guard;
  return kMean ? gpuprim::mean(x, dim, keepdim, dtype) : gpuprim::sum(x, dim, keepdim, dtype);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { impl(m, "sum", &sum_autograd<false>, "mean", &sum_autograd<true>); }

}  // namespace gpuprim
