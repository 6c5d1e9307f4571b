// Autograd of gpuprim::spmm. The forward re-dispatches below autograd; the backward is made of registered and
// ATen ops so torch.compile traces it. sum / mean: dense's gradient is the transposed product
// spmm(csr_transpose(A), grad) (mean: grad divided by the row lengths first), values' gradient the registered
// gpuprim::spmm_backward (a dot product per nonzero). max / min: see extreme_backward.
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <limits>
#include <utility>

#include "common/torch_utils.h"
#include "common/autograd_utils.h"
#include "include/gpuprim/gpuprim.h"
#include "common/registration.h"

namespace gpuprim {
namespace {

// max / min: each output element came from one nonzero of its row, the first in the row's order whose product
// (values[k] * dense[col[k]], in the forward's fp32 / fp64) attains the row's extreme, or the first NaN product
// where the extreme is NaN (the forward propagates NaN). The gradient flows to that nonzero only, where torch's
// amax splits it among ties. Products are recomputed as [nnz, F]; values' gradient is gpuprim's exact sum over
// the columns (CPU == CUDA), dense's sums the winners' terms per column with gpuprim's deterministic index_add
// (the same bits on every run; CPU and CUDA may associate a long column's terms differently).
std::pair<at::Tensor, at::Tensor> extreme_backward(const at::Tensor& grad, const at::Tensor& crow,
                                                   const at::Tensor& col, const at::Tensor& values,
                                                   const at::Tensor& dense, bool max, bool need_values,
                                                   bool need_dense) {
  const bool vector = dense.dim() == 1;
  const at::Tensor x = vector ? dense.unsqueeze(1) : dense, g = vector ? grad.unsqueeze(1) : grad;
  const auto acc = dense.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor cols = col.to(at::kLong), lengths = crow.to(at::kLong).diff();
  const c10::SymInt nnz = col.sym_size(0), rows = crow.sym_size(0) - 1, features = x.sym_size(1);
  const at::Tensor row_of =
      at::repeat_interleave_symint(lengths, std::optional<c10::SymInt>(nnz));  // the row of each nonzero
  const at::Tensor gathered = x.index_select(0, cols).to(acc);
  const at::Tensor weights = values.defined() ? values.to(acc).unsqueeze(1) : at::Tensor();
  const at::Tensor products = values.defined() ? weights * gathered : gathered;
  const at::Tensor row_index = row_of.unsqueeze(1).expand_as(products);
  const at::Tensor nan = at::isnan(products);
  const double fill = max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const at::Tensor clean = at::where(nan, at::scalar_tensor(fill, products.options()), products);
  const at::Tensor extreme = at::zeros_symint({rows, features}, products.options())
                                 .scatter_reduce(0, row_index, clean, max ? "amax" : "amin", /*include_self=*/false);
  const at::Tensor row_has_nan = at::zeros_symint({rows, features}, products.options().dtype(at::kInt))
                                     .scatter_reduce(0, row_index, nan.to(at::kInt), "amax", /*include_self=*/true);
  const at::Tensor hit =
      at::where(row_has_nan.index_select(0, row_of).to(at::kBool), nan, clean == extreme.index_select(0, row_of));
  const c10::Scalar none(nnz);  // past every position: no winner
  const at::Tensor position = at::arange(none, cols.options()).unsqueeze(1).expand_as(products);
  const at::Tensor first = at::full_symint({rows, features}, none, cols.options())
                               .scatter_reduce(0, row_index, at::where(hit, position, none), "amin");
  const at::Tensor won = first.index_select(0, row_of) == position;
  const at::Tensor upstream = g.index_select(0, row_of).to(acc);
  const at::Tensor zero = at::zeros({}, products.options());
  // where, not a multiply by the mask: a losing term's NaN or inf must not reach the gradient.
  at::Tensor grad_values, grad_dense;
  if (need_values) {  // gpuprim's exact sum: the same bits on the CPU and CUDA
    grad_values = gpuprim::sum(at::where(won, upstream * gathered, zero), at::IntArrayRef{1}).to(values.scalar_type());
  }
  if (need_dense) {
    const at::Tensor source = at::where(won, values.defined() ? upstream * weights : upstream, zero);
    grad_dense = gpuprim::index_add(at::zeros_symint(x.sym_sizes(), products.options()), 0, cols, source, 1,
                                    /*deterministic=*/true)
                     .to(dense.scalar_type());
    if (vector) grad_dense = grad_dense.squeeze(1);
  }
  return {grad_values, grad_dense};
}

class SpmmFunction : public torch::autograd::Function<SpmmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& crow, const at::Tensor& col,
                            const std::optional<at::Tensor>& values, const at::Tensor& dense, c10::string_view reduce) {
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
    const at::Tensor& grad = grads[0];
    at::Tensor grad_values, grad_dense;
    // needs_input_grad counts tensor inputs only: values, when None, takes no slot.
    const bool weighted = ctx->saved_data["weighted"].toBool();
    if (reduce == "max" || reduce == "min") {
      std::tie(grad_values, grad_dense) =
          extreme_backward(grad, crow, col, values, dense, reduce == "max", weighted && ctx->needs_input_grad(2),
                           ctx->needs_input_grad(weighted ? 3 : 2));
      return {at::Tensor(), at::Tensor(), grad_values, grad_dense, at::Tensor()};
    }
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
  if (!autograd_needed(values) && !autograd_needed(dense)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::spmm(crow, col, values, dense, reduce);
  }
  return SpmmFunction::apply(crow, col, values, dense, reduce);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "spmm", &spmm_autograd,
       "spmm_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
