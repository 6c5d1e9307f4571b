// CUDA glue of gpuprim::unique: checks, outputs, guard, stream and workspace.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/hash/unique/unique.h"
#include "ops/hash/unique/unique_launch.h"

namespace gpuprim {
namespace {

// torch.unique(x, dim=d) for x of two or more dimensions: the slices x.select(d, i) are the elements.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_slices_cuda(
    const at::Tensor& x, int64_t d, bool return_inverse, bool return_counts, std::optional<int64_t> size,
    const std::optional<c10::Scalar>& fill_value) {
  const c10::cuda::CUDAGuard guard(x.device());
  auto [rows, values, inverse, counts, num_unique, m, width, capacity, fill] =
      unique_slices_prepare(x, d, return_inverse, return_counts, size, fill_value);
  TorchWorkspace workspace(x.device());
  unique_slices_cuda_launch(rows.const_data_ptr(), to_dtype(x.scalar_type()), m, width, capacity, fill,
                            values.mutable_data_ptr(), return_inverse ? inverse.mutable_data_ptr<int64_t>() : nullptr,
                            return_counts ? counts.mutable_data_ptr<int64_t>() : nullptr,
                            num_unique.mutable_data_ptr<int64_t>(), workspace, current_stream());
  return {values.movedim(0, d).contiguous(), inverse, counts, num_unique};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_cuda(const at::Tensor& x, bool return_inverse,
                                                                       bool return_counts, std::optional<int64_t> size,
                                                                       const std::optional<c10::Scalar>& fill_value,
                                                                       std::optional<int64_t> dim) {
  check_input_errors(x.device());  // what earlier calls' kernels found (no sync)
  if (dim.has_value()) {
    const int64_t d = unique_dim_check(x, *dim);
    // A 1-D x's slices are its elements: the flattened form gives the same outputs.
    if (x.dim() > 1) return unique_slices_cuda(x, d, return_inverse, return_counts, size, fill_value);
  }
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
