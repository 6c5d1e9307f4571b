// CPU kernel of gpuprim::sort_values: gpuprim::sort's values (its CPU kernel is the reference).
#include <torch/library.h>

#include <limits>

#include "include/gpuprim/gpuprim.h"
#include "ops/sort/sort.h"
#include "ops/sort_values/sort_values.h"

namespace gpuprim {

bool sort_values_keys_only(at::ScalarType type, int64_t n) {
  return (type == at::kInt || type == at::kLong) && n <= std::numeric_limits<int32_t>::max();
}

namespace {

at::Tensor sort_values_cpu(const at::Tensor& x, int64_t dim, bool descending) {
  sort_check(x, dim, "sort_values");
  return std::get<0>(gpuprim::sort(x, dim, descending));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("sort_values", &sort_values_cpu); }

}  // namespace gpuprim
