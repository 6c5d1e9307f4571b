// Element conversions for kernels: to the accumulator type and back, with explicit rounding for the
// 16-bit floats. (The dtype dispatch is prim/util/dispatch.h, included here for the launchers.)
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "prim/util/dispatch.h"

namespace gpuprim {

template <typename To, typename From>
__host__ __device__ __forceinline__ To convert(From v) { return static_cast<To>(v); }
template <> __device__ __forceinline__ float convert<float, __half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float convert<float, __nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ __forceinline__ __half convert<__half, float>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16, float>(float v) { return __float2bfloat16_rn(v); }

}  // namespace gpuprim
