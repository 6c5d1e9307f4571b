// CPU kernel of gpuprim::run_length_encode: the readable reference for the CUDA kernel.
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"
#include "prim/device/run_length/slice_equal.h"
#include "prim/util/dtype_codec.h"

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

// Runs of equal consecutive slices of rows[m, width] (contiguous): two slices are equal when every element is
// (prim's slices_equal: the dtype's ==, so a slice holding a NaN starts a run of its own); unique keeps each
// run's first slice.
template <typename Bits>
int64_t slice_runs(const Bits* rows, int64_t m, int64_t width, KeyCodec<Bits> codec, Bits* unique, int64_t* counts) {
  int64_t runs = 0;
  for (int64_t i = 0; i < m; ++i) {
    if (i > 0 && run_length::slices_equal(rows + i * width, rows + (i - 1) * width, width, codec)) {
      ++counts[runs - 1];
    } else {
      std::copy(rows + i * width, rows + (i + 1) * width, unique + runs * width);
      counts[runs] = 1;
      ++runs;
    }
  }
  return runs;
}

template <typename Bits>
int64_t slice_runs_typed(const at::Tensor& rows, int64_t m, int64_t width, at::Tensor& unique, at::Tensor& counts) {
  return slice_runs<Bits>(static_cast<const Bits*>(rows.const_data_ptr()), m, width,
                          key_codec_of<Bits>(to_dtype(rows.scalar_type())),
                          static_cast<Bits*>(unique.mutable_data_ptr()), counts.mutable_data_ptr<int64_t>());
}

// torch.unique_consecutive(x, dim=d) for x of two or more dimensions: the slices x.select(d, i) are the elements.
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_slices_cpu(const at::Tensor& x, int64_t d) {
  const int64_t m = x.size(d);
  const int64_t width = run_length_encode_slice_width(x, d);
  const at::Tensor rows = x.movedim(d, 0).contiguous();  // [m, ...]: slice i is row i
  at::Tensor unique = at::zeros(rows.sizes(), x.options());
  at::Tensor counts = at::zeros({m}, x.options().dtype(at::kLong));
  at::Tensor num_runs = at::empty({1}, x.options().dtype(at::kLong));
  int64_t runs = 0;
  switch (x.element_size()) {
    case 1: runs = slice_runs_typed<uint8_t>(rows, m, width, unique, counts); break;
    case 2: runs = slice_runs_typed<uint16_t>(rows, m, width, unique, counts); break;
    case 4: runs = slice_runs_typed<uint32_t>(rows, m, width, unique, counts); break;
    default: runs = slice_runs_typed<uint64_t>(rows, m, width, unique, counts); break;
  }
  num_runs.mutable_data_ptr<int64_t>()[0] = runs;
  return {unique.movedim(0, d).contiguous(), counts, num_runs};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_cpu(const at::Tensor& x, std::optional<int64_t> dim) {
  if (dim.has_value()) {
    const int64_t d = run_length_encode_dim_check(x, *dim);
    // A 1-D x's slices are its elements: the 1-D form gives the same outputs.
    if (x.dim() > 1) return run_length_encode_slices_cpu(x, d);
  }
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
