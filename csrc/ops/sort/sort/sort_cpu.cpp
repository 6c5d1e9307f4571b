// CPU kernel of gpuprim::sort: the readable reference for the CUDA kernel.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/torch_order.h"
#include "common/torch_utils.h"
#include "ops/sort/sort/sort.h"

namespace gpuprim {
namespace {

template <typename T>
void sort_rows(const T* in, T* values, int64_t* indices, int64_t rows, int64_t n, bool descending) {
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t row = begin; row < end; ++row) {
      const T* x = in + row * n;
      std::iota(order.begin(), order.end(), int64_t(0));
      // Stable: equal elements keep their input order, in both directions.
      std::stable_sort(order.begin(), order.end(), [x, descending](int64_t i, int64_t j) {
        return descending ? torch_order_less(x[j], x[i]) : torch_order_less(x[i], x[j]);
      });
      for (int64_t k = 0; k < n; ++k) {
        values[row * n + k] = x[order[k]];
        indices[row * n + k] = order[k];
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> sort_cpu(const at::Tensor& x, int64_t dim, bool descending) {
  return sort_along_dim(x, dim, [descending](const at::Tensor& input, at::Tensor& values, at::Tensor& indices,
                                             int64_t rows, int64_t n) {
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_sort_cpu", [&] {
      sort_rows<scalar_t>(input.const_data_ptr<scalar_t>(), values.mutable_data_ptr<scalar_t>(),
                          indices.mutable_data_ptr<int64_t>(), rows, n, descending);
    });
  });
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("sort", &sort_cpu); }

}  // namespace gpuprim
