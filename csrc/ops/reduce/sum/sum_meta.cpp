// Shape function of gpuprim::sum and gpuprim::mean for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "ops/reduce/sum/sum.h"

namespace gpuprim {
namespace {

at::Tensor sum_meta(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  const SumPlan plan = sum_check("sum", x, dim, dtype);
  return at::empty_symint(sum_out_sizes(x, plan, keepdim), x.options().dtype(plan.out_dtype));
}

at::Tensor mean_meta(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype) {
  const SumPlan plan = sum_check("mean", x, dim, dtype);
  return at::empty_symint(sum_out_sizes(x, plan, keepdim), x.options().dtype(plan.out_dtype));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) {
  m.impl("sum", &sum_meta);
  m.impl("mean", &mean_meta);
}

}  // namespace gpuprim
