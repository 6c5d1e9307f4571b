// CPU kernel of gpuprim::run_length_encode: the readable reference for the CUDA kernel.
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"

namespace gpuprim {

namespace {

// A run is a maximal stretch of consecutive elements equal under == (so NaN != NaN: every NaN is a
// run of its own, and -0.0 == +0.0 join one run); unique keeps the first element of each run.
template <typename T>
int64_t encode(const T* x, int64_t n, T* unique, int64_t* counts) {
  int64_t runs = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0 && x[i] == x[i - 1]) {
      ++counts[runs - 1];
    } else {
      unique[runs] = x[i];
      counts[runs] = 1;
      ++runs;
    }
  }
  return runs;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_cpu(const at::Tensor& x) {
  run_length_encode_check(x);
  const at::Tensor input = x.contiguous();
  const int64_t n = x.numel();
  at::Tensor unique = at::zeros({n}, x.options());
  at::Tensor counts = at::zeros({n}, x.options().dtype(at::kLong));
  at::Tensor num_runs = at::empty({1}, x.options().dtype(at::kLong));
  AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kHalf, at::kBFloat16, x.scalar_type(), "gpuprim_run_length_encode_cpu",
                             [&] {
                               num_runs.mutable_data_ptr<int64_t>()[0] =
                                   encode<scalar_t>(input.const_data_ptr<scalar_t>(), n,
                                                    unique.mutable_data_ptr<scalar_t>(),
                                                    counts.mutable_data_ptr<int64_t>());
                             });
  return {unique, counts, num_runs};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("run_length_encode", &run_length_encode_cpu); }

}  // namespace gpuprim
