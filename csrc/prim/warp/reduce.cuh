// Butterfly reductions over the lanes of a warp (or of aligned groups of kWidth lanes). Every lane ends with
// the result, and the order of the operations is fixed, so float results are bitwise the same on every run.
// Every lane of the warp must call them (full mask).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "prim/util/launch.h"

namespace gpuprim {
namespace warp {

// The largest value of the lane's group of kWidth lanes (a power of two <= 32).
template <int kWidth = 32>
__device__ __forceinline__ uint32_t group_max(uint32_t value) {
#pragma unroll
  for (int offset = kWidth / 2; offset >= 1; offset /= 2) {
    value = ::max(value, __shfl_xor_sync(kFullMask, value, offset));  // CUDA's unsigned max, not warp::max
  }
  return value;
}

// The best (key, position) of the warp: the largest key, the lower position among equal keys (a total order,
// so every lane ends with the same pair).
template <typename Key>
__device__ __forceinline__ void best(Key& key, uint32_t& position) {
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) {
    const Key other_key = __shfl_xor_sync(kFullMask, key, offset);
    const uint32_t other_position = __shfl_xor_sync(kFullMask, position, offset);
    if (other_key > key || (other_key == key && other_position < position)) {
      key = other_key;
      position = other_position;
    }
  }
}

// The warp's sum on every lane. float or double: each addition rounded on its own (never fused), in the
// same order on every lane; integers: exact.
template <typename T>
__device__ __forceinline__ T sum(T value) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_integral_v<T>,
                "float, double or an integer");
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) {
    const T other = __shfl_xor_sync(kFullMask, value, offset);
    if constexpr (std::is_same_v<T, float>) {
      value = __fadd_rn(value, other);
    } else if constexpr (std::is_same_v<T, double>) {
      value = __dadd_rn(value, other);
    } else {
      value += other;
    }
  }
  return value;
}

__device__ __forceinline__ float max(float value) {
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
  return value;
}

// The warp's largest / smallest unsigned value on every lane: one redux instruction on sm_80 and later.
__device__ __forceinline__ uint32_t max_u32(uint32_t value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_max_sync(kFullMask, value);
#else
  return group_max<32>(value);
#endif
}

__device__ __forceinline__ uint32_t min_u32(uint32_t value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_min_sync(kFullMask, value);
#else
  return ~group_max<32>(~value);
#endif
}

}  // namespace warp
}  // namespace gpuprim
