// CPU kernel of gpuprim::unique: the readable reference for the CUDA kernels. torch.unique's order and
// equality: the key codec's order (prim/util/key_codec.cuh: NaN last, -0.0 == +0.0), a stable sort, and a
// new value wherever the key changes or is a NaN's (each NaN is a value of its own, as in torch.unique).
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "common/torch_utils.h"
#include "ops/hash/unique/unique.h"
#include "prim/util/key_codec.cuh"

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

template <typename Bits>
KeyCodec<Bits> codec_of(at::ScalarType type) {
  switch (type) {
    case at::kHalf: return {KeyKind::kFloat, static_cast<Bits>(kFloat16InfBits), false};
    case at::kBFloat16: return {KeyKind::kFloat, static_cast<Bits>(kBFloat16InfBits), false};
    case at::kFloat: return {KeyKind::kFloat, static_cast<Bits>(kFloat32InfBits), false};
    case at::kDouble: return {KeyKind::kFloat, static_cast<Bits>(kFloat64InfBits), false};
    case at::kBool: case at::kByte: return {KeyKind::kUnsigned, 0, false};
    default: return {KeyKind::kSigned, 0, false};
  }
}

template <typename Bits>
void unique_typed(const at::Tensor& x, int64_t capacity, uint64_t fill_bits, at::Tensor& values, at::Tensor& inverse,
                  at::Tensor& counts, at::Tensor& num_unique) {
  Bits fill;
  std::memcpy(&fill, &fill_bits, sizeof(Bits));
  unique_bits<Bits>(static_cast<const Bits*>(x.const_data_ptr()), x.numel(), codec_of<Bits>(x.scalar_type()),
                    capacity, fill, static_cast<Bits*>(values.mutable_data_ptr()),
                    inverse.numel() > 0 ? inverse.mutable_data_ptr<int64_t>() : nullptr,
                    counts.numel() > 0 ? counts.mutable_data_ptr<int64_t>() : nullptr,
                    num_unique.mutable_data_ptr<int64_t>());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique_cpu(const at::Tensor& x, bool return_inverse,
                                                                      bool return_counts, std::optional<int64_t> size,
                                                                      const std::optional<c10::Scalar>& fill_value) {
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
