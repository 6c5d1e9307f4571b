// The ascending key codec (key_codec.cuh) of a dtype chosen at run time, for code that handles elements as raw
// bits of their width (the CPU kernels of unique and of run_length_encode's slices). Host-compilable.
#pragma once
#include "prim/util/dtype.h"
#include "prim/util/key_codec.cuh"

namespace gpuprim {

// Bits is the unsigned integer of the dtype's width.
template <typename Bits>
KeyCodec<Bits> key_codec_of(DType type) {
  switch (type) {
    case DType::kFloat16: return {KeyKind::kFloat, static_cast<Bits>(kFloat16InfBits), false};
    case DType::kBFloat16: return {KeyKind::kFloat, static_cast<Bits>(kBFloat16InfBits), false};
    case DType::kFloat32: return {KeyKind::kFloat, static_cast<Bits>(kFloat32InfBits), false};
    case DType::kFloat64: return {KeyKind::kFloat, static_cast<Bits>(kFloat64InfBits), false};
    case DType::kBool: case DType::kUInt8: return {KeyKind::kUnsigned, 0, false};
    default: return {KeyKind::kSigned, 0, false};
  }
}

}  // namespace gpuprim
