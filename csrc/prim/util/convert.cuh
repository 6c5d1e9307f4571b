// Element-type plumbing for kernels: loads that convert to the accumulator type, stores that
// round back, and the DType -> C++ type dispatch used by every launcher.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "prim/util/dtype.h"

namespace gpuprim {

template <typename To, typename From>
__host__ __device__ __forceinline__ To convert(From v) { return static_cast<To>(v); }
template <> __device__ __forceinline__ float convert<float, __half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float convert<float, __nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ __forceinline__ __half convert<__half, float>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16, float>(float v) { return __float2bfloat16_rn(v); }

[[noreturn]] inline void unsupported_dtype(const char* op, DType t) {
  throw std::invalid_argument(std::string("gpuprim.") + op + ": unsupported dtype code " +
                              std::to_string(static_cast<int>(t)));
}

}  // namespace gpuprim

// Calls BODY with `scalar_t` bound to the C++ type of DTYPE (all ten DType values).
#define GPUPRIM_DISPATCH_ALL(OP, DTYPE, ...)                                          \
  [&] {                                                                                \
    switch (DTYPE) {                                                                   \
      case ::gpuprim::DType::kBool: { using scalar_t = bool; return __VA_ARGS__(); }   \
      case ::gpuprim::DType::kUInt8: { using scalar_t = uint8_t; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kInt8: { using scalar_t = int8_t; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kInt16: { using scalar_t = int16_t; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kInt32: { using scalar_t = int32_t; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kInt64: { using scalar_t = int64_t; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kFloat16: { using scalar_t = __half; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kBFloat16: { using scalar_t = __nv_bfloat16; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kFloat32: { using scalar_t = float; return __VA_ARGS__(); } \
      case ::gpuprim::DType::kFloat64: { using scalar_t = double; return __VA_ARGS__(); } \
    }                                                                                  \
    ::gpuprim::unsupported_dtype(OP, DTYPE);                                           \
  }()
