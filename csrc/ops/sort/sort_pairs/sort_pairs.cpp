// gpuprim::sort_pairs' device-independent part: the argument checks and the generic path (a stable sort of the
// keys, then the values gathered), which the CUDA glue takes for what its direct path does not cover.
#include "ops/sort/sort_pairs/sort_pairs.h"

#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {

void sort_pairs_check(const at::Tensor& keys, const at::Tensor& values, std::optional<int64_t> end_bit) {
  const auto type = keys.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), "sort_pairs",
                      "keys", "a floating-point, integer or bool tensor", type);
  GPUPRIM_CHECK_ARG(keys.dim() == 1, "sort_pairs", "keys", "1-D", c10::str(keys.dim(), "-D"));
  GPUPRIM_CHECK_ARG(values.dim() >= 1 && values.sym_size(0) == keys.sym_size(0), "sort_pairs", "values",
                    c10::str("a tensor whose first dim is keys' length ", keys.sym_size(0)), values.sym_sizes());
  check_same_device("sort_pairs", keys, "values", values);
  if (end_bit.has_value()) {
    GPUPRIM_CHECK_ARG(at::isIntegralType(type, /*includeBool=*/true), "sort_pairs", "end_bit",
                      c10::str("None for ", type, " keys (only integer keys skip bits)"), *end_bit);
    const int64_t width = int64_t(keys.element_size()) * 8;
    GPUPRIM_CHECK_ARG(*end_bit >= 1 && *end_bit <= width, "sort_pairs", "end_bit",
                      c10::str("in [1, ", width, "] for ", type, " keys"), *end_bit);
  }
}

std::tuple<at::Tensor, at::Tensor> sort_pairs_by_sort(const at::Tensor& keys, const at::Tensor& values,
                                                      bool descending) {
  auto [sorted_keys, order] = gpuprim::sort(keys, 0, descending);
  return {sorted_keys, values.index_select(0, order)};
}

}  // namespace gpuprim
