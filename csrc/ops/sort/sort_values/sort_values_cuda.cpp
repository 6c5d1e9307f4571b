// CUDA glue of gpuprim::sort_values: one int32 / int64 row goes to the keys-only sort (sort_values_cuda.cu),
// everything else is gpuprim::sort's values.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"
#include "ops/sort/sort/sort.h"
#include "ops/sort/sort_values/sort_values_launch.h"

namespace gpuprim {
namespace {

// Whether a row takes the keys-only radix sort: int32 and int64 (equal keys are equal bits, so no positions need
// carrying; floats keep -0.0 / +0.0 and NaN payloads in input order, which needs them), at any length.
bool keys_only(at::ScalarType type) { return type == at::kInt || type == at::kLong; }

at::Tensor sort_values_cuda(const at::Tensor& x, int64_t dim, bool descending) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  dim = sort_check(x, dim, "sort_values");
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  if (n < 2 || x.numel() != n || !keys_only(x.scalar_type())) {
    return std::get<0>(gpuprim::sort(x, dim, descending));
  }
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();  // one row: its elements in order
  at::Tensor values = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  TorchWorkspace workspace(x.device());
  sort_values_cuda_launch(input.const_data_ptr(), to_dtype(x.scalar_type()), n, descending,
                          values.mutable_data_ptr(), workspace, current_stream());
  return values;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("sort_values", &sort_values_cuda); }

}  // namespace gpuprim
