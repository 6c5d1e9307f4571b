// CPU kernel of gpuprim::topk: the readable reference for the CUDA kernels. Each row: a partial
// sort of the positions under one total order (value, then position), so the result is unique.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/registration.h"
#include "common/torch_order.h"
#include "common/torch_utils.h"
#include "ops/topk/topk/topk.h"

namespace gpuprim {
namespace {

template <typename T>
void topk_rows_cpu(const T* in, T* values, int64_t* indices, int64_t rows, int64_t n, int64_t k, bool largest) {
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t row = begin; row < end; ++row) {
      const T* x = in + row * n;
      std::iota(order.begin(), order.end(), int64_t(0));
      // `better` is a strict total order (ties broken by position), so the top k and their order are unique.
      const auto better = [x, largest](int64_t i, int64_t j) {
        const bool before = largest ? torch_order_less(x[j], x[i]) : torch_order_less(x[i], x[j]);
        const bool after = largest ? torch_order_less(x[i], x[j]) : torch_order_less(x[j], x[i]);
        return before || (!after && i < j);
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
      for (int64_t j = 0; j < k; ++j) {
        values[row * k + j] = x[order[j]];
        indices[row * k + j] = order[j];
      }
    }
  });
}

std::tuple<at::Tensor, at::Tensor> topk_cpu(const at::Tensor& x, int64_t k, int64_t dim, bool largest,
                                            bool /*sorted*/) {
  return topk_along_dim(
      x, k, dim, largest,
      [](const at::Tensor& input, at::Tensor& values, at::Tensor& indices, int64_t rows, int64_t n, int64_t k,
         bool largest) {
        AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_topk_cpu", [&] {
          topk_rows_cpu<scalar_t>(input.const_data_ptr<scalar_t>(), values.mutable_data_ptr<scalar_t>(),
                                  indices.mutable_data_ptr<int64_t>(), rows, n, k, largest);
        });
      });
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { impl(m, "topk", &topk_cpu, "topk_backward", &topk_backward_any_device); }

}  // namespace gpuprim
