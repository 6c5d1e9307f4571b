// Shape function of gpuprim::histogram: sizes are fixed by bins, never by the data.
#include <torch/library.h>

#include "ops/histogram/histogram/histogram.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> histogram_meta(const at::Tensor& x, int64_t bins, double lo, double hi,
                                                  const std::optional<at::Tensor>& weights,
                                                  std::optional<bool> /*deterministic*/) {
  const auto count_type = histogram_check(x, bins, lo, hi, weights);
  return {at::empty({bins}, x.options().dtype(count_type)), at::empty({1}, x.options().dtype(at::kLong))};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("histogram", &histogram_meta); }

}  // namespace gpuprim
