// CUDA glue of gpuprim::cumsum: checks, output allocation, stream and workspace; kernels in cumsum_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/scan/cumsum/cumsum.h"
#include "ops/scan/cumsum/cumsum_launch.h"

namespace gpuprim {
namespace {

// Benchmarking knob: GPUPRIM_SCAN_ALGO=three_pass scans the long rows of fp32/fp16/bf16 with reduce-then-scan
// instead of the single pass (benchmarks/bench_cumsum.py times both). Read per call, ~100 ns.
scan::Algorithm scan_algorithm() {
  const char* algo = std::getenv("GPUPRIM_SCAN_ALGO");
  return algo != nullptr && std::strcmp(algo, "three_pass") == 0 ? scan::Algorithm::kThreePass
                                                                  : scan::Algorithm::kAuto;
}

at::Tensor cumsum_cuda(const at::Tensor& x, int64_t dim, bool exclusive, bool reverse) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  dim = cumsum_check(x, dim);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  at::Tensor out = at::empty(input.sizes(), input.options().dtype(cumsum_out_dtype(input.scalar_type())));
  if (input.numel() == 0) return out;
  const int64_t n = input.dim() == 0 ? 1 : input.size(dim);
  // Product of the sizes after dim (not stride(dim): size-1 dims may carry any stride).
  const int64_t inner = input.dim() == 0 ? 1 : c10::multiply_integers(input.sizes().slice(dim + 1));
  TorchWorkspace workspace(input.device());
  cumsum_cuda_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), out.mutable_data_ptr(),
                     input.numel() / (n * inner), n, inner, exclusive, reverse, scan_algorithm(), workspace,
                     current_stream());
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("cumsum", &cumsum_cuda); }

}  // namespace gpuprim
