// CPU kernel of gpuprim::cumsum: the readable reference for the CUDA kernel.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/scan/cumsum/cumsum.h"

namespace gpuprim {

namespace {

// Same accumulator rule as the CUDA kernel: fp32 for 16-bit floats, int64 for integers.
template <typename In, typename Acc, typename Out>
void cumsum_rows(const In* in, Out* out, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse) {
  at::parallel_for(0, outer * inner, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t base = (c / inner) * n * inner + c % inner;
      Acc running = Acc(0);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t at = base + (reverse ? n - 1 - i : i) * inner;
        const Acc before = running;
        running = running + static_cast<Acc>(in[at]);
        out[at] = static_cast<Out>(exclusive ? before : running);
      }
    }
  });
}

at::Tensor cumsum_cpu(const at::Tensor& x, int64_t dim, bool exclusive, bool reverse) {
  dim = cumsum_check(x, dim);
  const at::Tensor input = x.contiguous();
  at::Tensor out = at::empty(input.sizes(), input.options().dtype(cumsum_out_dtype(input.scalar_type())));
  if (input.numel() == 0) return out;
  const int64_t n = input.dim() == 0 ? 1 : input.size(dim);
  // Product of the sizes after dim (not stride(dim): size-1 dims may carry any stride).
  const int64_t inner = input.dim() == 0 ? 1 : c10::multiply_integers(input.sizes().slice(dim + 1));
  const int64_t outer = input.numel() / (n * inner);
  AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_cumsum_cpu", [&] {
    using Acc = std::conditional_t<std::is_floating_point_v<scalar_t>, scalar_t,
                                   std::conditional_t<std::is_integral_v<scalar_t>, int64_t, float>>;
    using Out = std::conditional_t<std::is_integral_v<scalar_t>, int64_t, scalar_t>;
    cumsum_rows<scalar_t, Acc, Out>(input.const_data_ptr<scalar_t>(), out.mutable_data_ptr<Out>(), outer, n, inner,
                                    exclusive, reverse);
  });
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("cumsum", &cumsum_cpu); }

}  // namespace gpuprim
