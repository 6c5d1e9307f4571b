// Shape function of gpuprim::sort_pairs for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "ops/sort/sort_pairs/sort_pairs.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> sort_pairs_meta(const at::Tensor& keys, const at::Tensor& values, bool descending,
                                                   std::optional<int64_t> end_bit) {
  sort_pairs_check(keys, values, end_bit);
  return {at::empty_symint(keys.sym_sizes(), keys.options()), at::empty_symint(values.sym_sizes(), values.options())};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("sort_pairs", &sort_pairs_meta); }

}  // namespace gpuprim
