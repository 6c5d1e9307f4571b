// Shape function of gpuprim::bincount: sizes are fixed by num_bins, never by the data.
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/histogram/bincount/bincount.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> bincount_meta(const at::Tensor& x, int64_t num_bins,
                                                 const std::optional<at::Tensor>& weights,
                                                 std::optional<bool> /*deterministic*/) {
  const auto count_type = bincount_check(x, num_bins, weights);
  return {at::empty({num_bins}, x.options().dtype(count_type)), at::empty({1}, x.options().dtype(at::kLong))};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("bincount", &bincount_meta); }

}  // namespace gpuprim
