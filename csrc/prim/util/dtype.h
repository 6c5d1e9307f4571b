// Element types as the CUDA launchers see them. Kept free of ATen so that .cu files
// compile quickly (see DESIGN.md "Build"); csrc/common/torch_utils.h maps at::ScalarType here.
#pragma once
#include <cstdint>

namespace gpuprim {

enum class DType : int8_t {
  kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64
};

inline bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64;
}

}  // namespace gpuprim
