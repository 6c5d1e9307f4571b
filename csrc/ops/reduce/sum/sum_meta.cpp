// Shape function of gpuprim::sum and gpuprim::mean for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "common/registration.h"
#include "ops/reduce/sum/sum.h"

namespace gpuprim {
namespace {

template <bool kMean>
at::Tensor sum_meta(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return sum_output(x, sum_check(sum_op_name(kMean), x, dim, dtype), keepdim);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { impl(m, "sum", &sum_meta<false>, "mean", &sum_meta<true>); }

}  // namespace gpuprim
