// gpuprim::sort's device-independent part: argument checks and the move of `dim` around the row kernels (CPU and
// CUDA alike; sort_values and sort_pairs share the checks).
#include "ops/sort/sort/sort.h"

#include "common/torch_utils.h"

namespace gpuprim {

int64_t sort_check(const at::Tensor& x, int64_t dim, const char* op) {
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), op, "x",
                      "a floating-point, integer or bool tensor", type);
  return wrap_dim(op, "dim", dim, x.dim());
}

std::tuple<at::Tensor, at::Tensor> sort_along_dim(const at::Tensor& x, int64_t dim, const SortRows& sort_rows) {
  dim = sort_check(x, dim);
  at::Tensor values = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor indices = at::empty(x.sizes(), x.options().dtype(at::kLong).memory_format(at::MemoryFormat::Contiguous));
  if (x.numel() == 0) return {values, indices};
  // The kernels sort the rows of a contiguous [rows, n] layout: move `dim` last, and back after.
  const bool last = x.dim() == 0 || dim == x.dim() - 1;
  const at::Tensor input = last ? x.contiguous() : x.movedim(dim, -1).contiguous();
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  at::Tensor sorted_values = last ? values : at::empty(input.sizes(), input.options());
  at::Tensor sorted_indices = last ? indices : at::empty(input.sizes(), input.options().dtype(at::kLong));
  sort_rows(input, sorted_values, sorted_indices, input.numel() / n, n);
  if (!last) {
    values.copy_(sorted_values.movedim(-1, dim));
    indices.copy_(sorted_indices.movedim(-1, dim));
  }
  return {values, indices};
}

}  // namespace gpuprim
