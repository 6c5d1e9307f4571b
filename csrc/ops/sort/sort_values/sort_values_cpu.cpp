// CPU kernel of gpuprim::sort_values: gpuprim::sort's values (its CPU kernel is the reference).
#include <torch/library.h>

#include "include/gpuprim/gpuprim.h"
#include "ops/sort/sort/sort.h"

namespace gpuprim {
namespace {

at::Tensor sort_values_cpu(const at::Tensor& x, int64_t dim, bool descending) {
  sort_check(x, dim, "sort_values");
  return std::get<0>(gpuprim::sort(x, dim, descending));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("sort_values", &sort_values_cpu); }

}  // namespace gpuprim
