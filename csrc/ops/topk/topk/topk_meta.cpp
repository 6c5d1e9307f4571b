// Shape functions of gpuprim::topk and its backward (SymInt-safe, no data access).
#include <torch/library.h>

#include "common/registration.h"
#include "ops/topk/topk/topk.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> topk_meta(const at::Tensor& x, c10::SymInt k, int64_t dim, bool /*largest*/,
                                             bool /*sorted*/) {
  dim = topk_check(x, k, dim);
  const auto sizes = topk_out_sizes(x, k, dim);
  return {at::empty_symint(sizes, x.options()), at::empty_symint(sizes, x.options().dtype(at::kLong))};
}

at::Tensor topk_backward_meta(const at::Tensor& grad_values, const at::Tensor& indices, c10::SymIntArrayRef self_sizes,
                              int64_t dim) {
  topk_backward_check(grad_values, indices, self_sizes, dim);
  return at::empty_symint(self_sizes, grad_values.options());
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(Meta, topk, meta)

}  // namespace gpuprim
