// CPU kernel of gpuprim::bincount: the readable reference for the CUDA kernel.
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/histogram/bincount/bincount.h"

namespace gpuprim {

namespace {

template <typename Index, typename Count>
void bincount_loop(const Index* x, int64_t n, int64_t num_bins, Count* counts, int64_t* overflow,
                   const std::function<Count(int64_t)>& weight) {
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t bin = static_cast<int64_t>(x[i]);
    if (bin < 0 || bin >= num_bins) {
      ++dropped;
    } else {
      counts[bin] += weight(i);
    }
  }
  *overflow = dropped;
}

std::tuple<at::Tensor, at::Tensor> bincount_cpu(const at::Tensor& x, int64_t num_bins,
                                                const std::optional<at::Tensor>& weights,
                                                std::optional<bool> /*deterministic: the CPU sums in order*/) {
  const auto count_type = bincount_check(x, num_bins, weights);
  const at::Tensor input = x.contiguous();
  at::Tensor counts = at::zeros({num_bins}, input.options().dtype(count_type));
  at::Tensor overflow = at::zeros({1}, input.options().dtype(at::kLong));
  AT_DISPATCH_INTEGRAL_TYPES(input.scalar_type(), "gpuprim_bincount_cpu", [&] {
    using Index = scalar_t;
    const Index* values = input.const_data_ptr<Index>();
    int64_t* dropped = overflow.mutable_data_ptr<int64_t>();
    if (!weights.has_value()) {
      bincount_loop<Index, int64_t>(values, input.numel(), num_bins, counts.mutable_data_ptr<int64_t>(), dropped,
                                    [](int64_t) { return int64_t(1); });
      return;
    }
    // Weights are read in the counts' dtype (as torch.bincount does), summed in index order.
    const at::Tensor w = weights->contiguous().to(count_type);
    AT_DISPATCH_FLOATING_TYPES(count_type, "gpuprim_bincount_cpu_weights", [&] {
      const scalar_t* wp = w.const_data_ptr<scalar_t>();
      bincount_loop<Index, scalar_t>(values, input.numel(), num_bins, counts.mutable_data_ptr<scalar_t>(), dropped,
                                     [wp](int64_t i) { return wp[i]; });
    });
  });
  return {counts, overflow};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("bincount", &bincount_cpu); }

}  // namespace gpuprim
