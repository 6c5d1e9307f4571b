// CPU kernel of gpuprim::sort_pairs: the generic path (sort_pairs.cpp), a stable sort of the keys and a gather.
#include <torch/library.h>

#include "ops/sort/sort_pairs/sort_pairs.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> sort_pairs_cpu(const at::Tensor& keys, const at::Tensor& values, bool descending,
                                                  std::optional<int64_t> end_bit) {
  sort_pairs_check(keys, values, end_bit);
  return sort_pairs_by_sort(keys, values, descending);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("sort_pairs", &sort_pairs_cpu); }

}  // namespace gpuprim
