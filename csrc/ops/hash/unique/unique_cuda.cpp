// CUDA glue of gpuprim::unique: checks, outputs, guard, stream and workspace.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/hash/unique/unique.h"
#include "ops/hash/unique/unique_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_cuda(const at::Tensor& x, bool return_inverse,
                                                                       bool return_counts, std::optional<int64_t> size,
                                                                       const std::optional<c10::Scalar>& fill_value) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  const int64_t capacity = unique_check(x, size);
  const uint64_t fill = unique_fill_bits(x, fill_value);
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  const auto longs = x.options().dtype(at::kLong);
  at::Tensor values = at::empty({capacity}, x.options());
  at::Tensor inverse = at::empty(return_inverse ? x.sizes() : at::IntArrayRef{0}, longs);
  at::Tensor counts = at::empty({return_counts ? capacity : 0}, longs);
  at::Tensor num_unique = at::empty({1}, longs);
  TorchWorkspace workspace(x.device());
  const bool exact = !size.has_value();  // the unsized form syncs anyway: it may take the hash path
  unique_cuda_launch(input.const_data_ptr(), to_dtype(x.scalar_type()), x.numel(), capacity, exact, fill,
                     values.mutable_data_ptr(), return_inverse ? inverse.mutable_data_ptr<int64_t>() : nullptr,
                     return_counts ? counts.mutable_data_ptr<int64_t>() : nullptr,
                     num_unique.mutable_data_ptr<int64_t>(), workspace, current_stream());
  return {values, inverse, counts, num_unique};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("unique", &unique_cuda); }

}  // namespace gpuprim
