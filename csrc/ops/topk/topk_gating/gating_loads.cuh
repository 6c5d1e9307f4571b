// Logit loads of the CUDA gating kernels (fp32, fp16, bf16 logits), exactly as the CPU's conversions to float.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "prim/util/dtype.h"

namespace gpuprim {
namespace gating {

template <DType kType>
__device__ __forceinline__ float load_logit(const void* logits, int64_t i) {
  if constexpr (kType == DType::kFloat32) {
    return static_cast<const float*>(logits)[i];
  } else if constexpr (kType == DType::kFloat16) {
    return __half2float(__ushort_as_half(static_cast<const unsigned short*>(logits)[i]));
  } else {
    return __uint_as_float(uint32_t(static_cast<const unsigned short*>(logits)[i]) << 16);
  }
}

}  // namespace gating
}  // namespace gpuprim
