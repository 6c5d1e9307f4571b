// The one dtype dispatch: dispatch<Types>(op, dtype, f) calls f(TypeTag<T>{}) with T the C++ type of
// `dtype` among Types, and raises a clear error for any other dtype. Type sets below; an op names the set
// its kernels are instantiated for.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "prim/util/dtype.h"

namespace gpuprim {

template <typename T>
struct TypeTag {
  using type = T;
};
template <typename... Ts>
struct TypeList {};

using AllTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, __half, __nv_bfloat16, float, double>;
using FloatingTypes = TypeList<__half, __nv_bfloat16, float, double>;
using IndexTypes = TypeList<int32_t, int64_t>;
// The floats computed in fp32 (no double): e.g. router logits.
using HalfAndFloatTypes = TypeList<__half, __nv_bfloat16, float>;

template <typename T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::kInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<__half>() { return DType::kFloat16; }
template <> constexpr DType dtype_of<__nv_bfloat16>() { return DType::kBFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }

[[noreturn]] inline void unsupported_dtype(const char* op, DType t) {
  throw std::invalid_argument(std::string("gpuprim.") + op + ": unsupported dtype code " +
                              std::to_string(static_cast<int>(t)));
}

namespace detail {
template <typename F, typename T, typename... Rest>
decltype(auto) dispatch(const char* op, DType type, F& f, TypeList<T, Rest...>) {
  if (type == dtype_of<T>()) return f(TypeTag<T>{});
  if constexpr (sizeof...(Rest) > 0) {
    return dispatch(op, type, f, TypeList<Rest...>{});
  } else {
    unsupported_dtype(op, type);
  }
}
}  // namespace detail

template <typename Types, typename F>
decltype(auto) dispatch(const char* op, DType type, F&& f) {
  return detail::dispatch(op, type, f, Types{});
}

// Calls f(std::integral_constant<int, P>{}) for P the smallest power of two in [kLow, kHigh] with P >= value (kHigh
// when value is larger): a run-time size to the template instantiation that serves it (tile shapes, lanes a row).
template <int kLow, int kHigh, typename F>
decltype(auto) dispatch_pow2(int64_t value, F&& f) {
  static_assert(kLow >= 1 && kLow <= kHigh, "a range of powers of two");
  if constexpr (kLow == kHigh) {
    return f(std::integral_constant<int, kHigh>{});
  } else {
    if (value <= kLow) return f(std::integral_constant<int, kLow>{});
    return dispatch_pow2<2 * kLow, kHigh>(value, f);
  }
}

}  // namespace gpuprim

// dispatch<AllTypes> for a lambda without arguments that names the element type `scalar_t`.
#define GPUPRIM_DISPATCH_ALL(OP, DTYPE, ...)                                        \
  ::gpuprim::dispatch<::gpuprim::AllTypes>(OP, DTYPE, [&](auto gpuprim_tag_) {      \
    using scalar_t = typename decltype(gpuprim_tag_)::type;                         \
    return __VA_ARGS__();                                                           \
  })
