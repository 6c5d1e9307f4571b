// gpuprim::topk's device-independent part: argument checks, shape rules, the move of `dim` around the row
// kernels, and the backward (ATen ops, any device).
#include "ops/topk/topk/topk.h"

#include <string>

#include "common/torch_utils.h"

namespace gpuprim {

int64_t topk_check(const at::Tensor& x, const c10::SymInt& k, int64_t dim) {
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/false), "topk", "self",
                      "a floating-point or integer tensor", type);
  dim = wrap_dim("topk", "dim", dim, x.dim());
  const c10::SymInt n = x.dim() == 0 ? c10::SymInt(1) : x.sym_size(dim);
  GPUPRIM_CHECK_ARG(k >= 0, "topk", "k", "non-negative", k);
  GPUPRIM_CHECK_ARG(k <= n, "topk", "k", "at most the size of dim " + std::to_string(dim) + " (" + c10::str(n) + ")",
                    k);
  return dim;
}

std::vector<c10::SymInt> topk_out_sizes(const at::Tensor& x, const c10::SymInt& k, int64_t dim) {
  std::vector<c10::SymInt> sizes(x.sym_sizes().begin(), x.sym_sizes().end());
  if (x.dim() > 0) sizes[dim] = k;  // a 0-d x gives 0-d outputs (torch.topk's convention)
  return sizes;
}

std::tuple<at::Tensor, at::Tensor> topk_along_dim(const at::Tensor& x, int64_t k, int64_t dim, bool largest,
                                                  const TopkRows& topk_rows) {
  dim = topk_check(x, k, dim);
  if (x.dim() == 0) {  // one element: itself, whatever k (0 or 1), like torch.topk
    return {x.clone(at::MemoryFormat::Contiguous), at::zeros({}, x.options().dtype(at::kLong))};
  }
  auto sizes = x.sizes().vec();
  sizes[dim] = k;
  at::Tensor values = at::empty(sizes, x.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor indices = at::empty(sizes, x.options().dtype(at::kLong).memory_format(at::MemoryFormat::Contiguous));
  if (values.numel() == 0) return {values, indices};  // k = 0 or no rows
  // The kernels work on the rows of a contiguous [rows, n] layout: move `dim` last, and back after.
  const bool last = dim == x.dim() - 1;
  const at::Tensor input = last ? x.contiguous() : x.movedim(dim, -1).contiguous();
  const int64_t n = x.size(dim);
  const int64_t rows = input.numel() / n;
  if (last) {
    topk_rows(input, values, indices, rows, n, k, largest);
    return {values, indices};
  }
  auto moved_sizes = input.sizes().vec();
  moved_sizes.back() = k;
  at::Tensor row_values = at::empty(moved_sizes, input.options());
  at::Tensor row_indices = at::empty(moved_sizes, input.options().dtype(at::kLong));
  topk_rows(input, row_values, row_indices, rows, n, k, largest);
  values.copy_(row_values.movedim(-1, dim));
  indices.copy_(row_indices.movedim(-1, dim));
  return {values, indices};
}

void topk_backward_check(const at::Tensor& grad_values, const at::Tensor& indices, c10::SymIntArrayRef self_sizes,
                         int64_t dim) {
  GPUPRIM_CHECK_DTYPE(indices.scalar_type() == at::kLong, "topk_backward", "indices", "int64", indices.scalar_type());
  GPUPRIM_CHECK_ARG(grad_values.dim() == indices.dim() && grad_values.sym_sizes() == indices.sym_sizes(),
                    "topk_backward", "grad_values", "of indices' shape " + c10::str(indices.sym_sizes()),
                    grad_values.sym_sizes());
  GPUPRIM_CHECK_ARG(grad_values.dim() == int64_t(self_sizes.size()), "topk_backward", "self_sizes",
                    "of grad_values' rank " + std::to_string(grad_values.dim()), self_sizes);
  wrap_dim("topk_backward", "dim", dim, grad_values.dim());
  check_same_device("topk_backward", grad_values, "indices", indices);
}

at::Tensor topk_backward_any_device(const at::Tensor& grad_values, const at::Tensor& indices,
                                    c10::SymIntArrayRef self_sizes, int64_t dim) {
  topk_backward_check(grad_values, indices, self_sizes, dim);
  if (self_sizes.empty()) return grad_values.clone(at::MemoryFormat::Contiguous);  // 0-d: the identity
  dim = wrap_dim("topk_backward", "dim", dim, grad_values.dim());
  // Each row's indices are distinct, so the scatter is a plain (deterministic) store.
  return at::zeros_symint(self_sizes, grad_values.options()).scatter_(dim, indices, grad_values);
}

}  // namespace gpuprim
