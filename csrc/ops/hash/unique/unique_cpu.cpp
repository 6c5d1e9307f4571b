// CPU kernel of gpuprim::unique: the readable reference for the CUDA kernels. torch.unique's order and
// equality: the key codec's order (prim/util/key_codec.cuh: NaN last, -0.0 == +0.0), a stable sort, and a
// new value wherever the key changes or is a NaN's (each NaN is a value of its own, as in torch.unique).
// The slices form (dim=) orders the slices lexicographically by the same keys (stably) and starts a new slice
// wherever two neighbours differ under == (prim's slices_equal: a slice holding a NaN equals no other).
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "common/torch_utils.h"
#include "ops/hash/unique/unique.h"
#include "prim/device/run_length/slice_equal.h"
#include "prim/util/dtype_codec.h"

namespace gpuprim {
namespace {

template <typename Bits>
void unique_bits(const Bits* x, int64_t n, KeyCodec<Bits> codec, int64_t capacity, Bits fill, Bits* values,
                 int64_t* inverse, int64_t* counts, int64_t* num_unique) {
  std::vector<Bits> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = codec.encode(x[i]);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  const Bits nan_key = Bits(~Bits(0));
  int64_t r = -1;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i = order[j];
    const bool nan = codec.kind == KeyKind::kFloat && keys[i] == nan_key;
    if (j == 0 || keys[i] != keys[order[j - 1]] || nan) {
      ++r;
      // The value of the run's lowest position (stable sort): its bits, so -0.0 or +0.0 as it came first.
      if (r < capacity) values[r] = x[i];
      if (r < capacity && counts != nullptr) counts[r] = 0;
    }
    if (r < capacity && counts != nullptr) ++counts[r];
    if (inverse != nullptr) inverse[i] = r;
  }
  *num_unique = r + 1;
  for (int64_t k = std::max<int64_t>(r + 1, 0); k < capacity; ++k) {
    values[k] = fill;
    if (counts != nullptr) counts[k] = 0;
  }
}

// unique of the m slices rows[m, width] (contiguous): values [capacity, width], counts [capacity], inverse [m].
template <typename Bits>
void unique_slices_bits(const Bits* rows, int64_t m, int64_t width, KeyCodec<Bits> codec, int64_t capacity, Bits fill,
                        Bits* values, int64_t* inverse, int64_t* counts, int64_t* num_unique) {
  std::vector<Bits> keys(static_cast<size_t>(m * width));
  for (int64_t e = 0; e < m * width; ++e) keys[e] = codec.encode(rows[e]);
  std::vector<int64_t> order(static_cast<size_t>(m));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(keys.begin() + a * width, keys.begin() + (a + 1) * width,
                                        keys.begin() + b * width, keys.begin() + (b + 1) * width);
  });
  int64_t r = -1;
  for (int64_t j = 0; j < m; ++j) {
    const int64_t i = order[j];
    if (j == 0 || !run_length::slices_equal(rows + i * width, rows + order[j - 1] * width, width, codec)) {
      ++r;
      // The slice of the run's lowest index (stable sort): its bits, so a zero's sign as it came first.
      if (r < capacity) std::copy(rows + i * width, rows + (i + 1) * width, values + r * width);
      if (r < capacity && counts != nullptr) counts[r] = 0;
    }
    if (r < capacity && counts != nullptr) ++counts[r];
    if (inverse != nullptr) inverse[i] = r;
  }
  *num_unique = r + 1;
  for (int64_t k = r + 1; k < capacity; ++k) {
    std::fill(values + k * width, values + (k + 1) * width, fill);
    if (counts != nullptr) counts[k] = 0;
  }
}

template <typename Bits>
void unique_typed(const at::Tensor& x, int64_t capacity, uint64_t fill_bits, at::Tensor& values, at::Tensor& inverse,
                  at::Tensor& counts, at::Tensor& num_unique) {
  Bits fill;
  std::memcpy(&fill, &fill_bits, sizeof(Bits));
  unique_bits<Bits>(
      static_cast<const Bits*>(x.const_data_ptr()), x.numel(), key_codec_of<Bits>(to_dtype(x.scalar_type())), capacity,
      fill, static_cast<Bits*>(values.mutable_data_ptr()),
      inverse.numel() > 0 ? inverse.mutable_data_ptr<int64_t>() : nullptr,
      counts.numel() > 0 ? counts.mutable_data_ptr<int64_t>() : nullptr, num_unique.mutable_data_ptr<int64_t>());
}

template <typename Bits>
void unique_slices_typed(const at::Tensor& rows, int64_t m, int64_t width, int64_t capacity, uint64_t fill_bits,
                         at::Tensor& values, at::Tensor& inverse, at::Tensor& counts, at::Tensor& num_unique) {
  Bits fill;
  std::memcpy(&fill, &fill_bits, sizeof(Bits));
  unique_slices_bits<Bits>(
      static_cast<const Bits*>(rows.const_data_ptr()), m, width, key_codec_of<Bits>(to_dtype(rows.scalar_type())),
      capacity, fill, static_cast<Bits*>(values.mutable_data_ptr()),
      inverse.numel() > 0 ? inverse.mutable_data_ptr<int64_t>() : nullptr,
      counts.numel() > 0 ? counts.mutable_data_ptr<int64_t>() : nullptr, num_unique.mutable_data_ptr<int64_t>());
}

// torch.unique(x, dim=d) for x of two or more dimensions: the slices x.select(d, i) are the elements.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_slices_cpu(
    const at::Tensor& x, int64_t d, bool return_inverse, bool return_counts, std::optional<int64_t> size,
    const std::optional<c10::Scalar>& fill_value) {
  auto [rows, values, inverse, counts, num_unique, m, width, capacity, fill] =
      unique_slices_prepare(x, d, return_inverse, return_counts, size, fill_value);
  switch (x.element_size()) {
    case 1: unique_slices_typed<uint8_t>(rows, m, width, capacity, fill, values, inverse, counts, num_unique); break;
    case 2: unique_slices_typed<uint16_t>(rows, m, width, capacity, fill, values, inverse, counts, num_unique); break;
    case 4: unique_slices_typed<uint32_t>(rows, m, width, capacity, fill, values, inverse, counts, num_unique); break;
    default: unique_slices_typed<uint64_t>(rows, m, width, capacity, fill, values, inverse, counts, num_unique); break;
  }
  return {values.movedim(0, d).contiguous(), inverse, counts, num_unique};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_cpu(const at::Tensor& x, bool return_inverse,
                                                                      bool return_counts, std::optional<int64_t> size,
                                                                      const std::optional<c10::Scalar>& fill_value,
                                                                      std::optional<int64_t> dim) {
  if (dim.has_value()) {
    const int64_t d = unique_dim_check(x, *dim);
    // A 1-D x's slices are its elements: the flattened form gives the same outputs.
    if (x.dim() > 1) return unique_slices_cpu(x, d, return_inverse, return_counts, size, fill_value);
  }
  const int64_t capacity = unique_check(x, size);
  const at::Tensor input = x.contiguous();
  at::Tensor values = at::empty({capacity}, x.options());
  at::Tensor inverse = at::empty(return_inverse ? x.sizes() : at::IntArrayRef{0}, x.options().dtype(at::kLong));
  at::Tensor counts = at::empty({return_counts ? capacity : 0}, x.options().dtype(at::kLong));
  at::Tensor num_unique = at::empty({1}, x.options().dtype(at::kLong));
  const uint64_t fill = unique_fill_bits(x, fill_value);
  switch (x.element_size()) {
    case 1: unique_typed<uint8_t>(input, capacity, fill, values, inverse, counts, num_unique); break;
    case 2: unique_typed<uint16_t>(input, capacity, fill, values, inverse, counts, num_unique); break;
    case 4: unique_typed<uint32_t>(input, capacity, fill, values, inverse, counts, num_unique); break;
    default: unique_typed<uint64_t>(input, capacity, fill, values, inverse, counts, num_unique); break;
  }
  return {values, inverse, counts, num_unique};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("unique", &unique_cpu); }

}  // namespace gpuprim
