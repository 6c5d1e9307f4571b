// Autograd of gpuprim::spmm (sum and mean). The forward re-dispatches below autograd; the backward is made of
// registered ops so torch.compile traces it: dense's gradient is the transposed product
// spmm(csr_transpose(A), grad) (mean: grad divided by the row lengths first), values' gradient the registered
// gpuprim::spmm_backward (a dot product per nonzero).
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

class SpmmFunction : public torch::autograd::Function<SpmmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& crow, const at::Tensor& col,
                            const std::optional<at::Tensor>& values, const at::Tensor& dense,
                            c10::string_view reduce) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = gpuprim::spmm(crow, col, values, dense, reduce);
    }
    ctx->saved_data["reduce"] = std::string(reduce);
    ctx->saved_data["weighted"] = values.has_value();
    ctx->save_for_backward({crow, col, values.has_value() ? *values : at::Tensor(), dense});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &crow = saved[0], &col = saved[1], &values = saved[2], &dense = saved[3];
    const std::string reduce = ctx->saved_data["reduce"].toStringRef();
    GPUPRIM_CHECK_ARG(reduce == "sum" || reduce == "mean", "spmm", "reduce",
                      "'sum' or 'mean' to be differentiated (max/min have no backward yet)", "'" + reduce + "'");
    const at::Tensor& grad = grads[0];
    at::Tensor grad_values, grad_dense;
    // needs_input_grad counts tensor inputs only: values, when None, takes no slot.
    const bool weighted = ctx->saved_data["weighted"].toBool();
    if (weighted && ctx->needs_input_grad(2)) {
      grad_values = gpuprim::spmm_backward(grad, crow, col, dense, reduce);
    }
    if (ctx->needs_input_grad(weighted ? 3 : 2)) {
      at::Tensor scaled = grad;
      if (reduce == "mean") {  // each row's gradient over its length (empty rows: nothing flows)
        const at::Tensor lengths = crow.diff().clamp_min(1).to(grad.scalar_type());
        scaled = grad / (grad.dim() == 2 ? lengths.unsqueeze(1) : lengths);
      }
      const auto [crow_t, col_t, perm] = gpuprim::csr_transpose(crow, col, dense.sym_size(0));
      std::optional<at::Tensor> values_t;
      if (values.defined()) values_t = values.index_select(0, perm);
      grad_dense = gpuprim::spmm(crow_t, col_t, values_t, scaled, "sum");
    }
    return {at::Tensor(), at::Tensor(), grad_values, grad_dense, at::Tensor()};
  }
};

at::Tensor spmm_autograd(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                         const at::Tensor& dense, c10::string_view reduce) {
  return SpmmFunction::apply(crow, col, values, dense, reduce);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  m.impl("spmm", &spmm_autograd);
  m.impl("spmm_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
