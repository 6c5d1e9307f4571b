// Order-preserving 32-bit keys of 1-, 2- and 4-byte elements without branches: the same keys as
// prim/radix_sort.cuh's KeyCodec::encode (which branches per element on the kind, NaN and zero). Used
// by the top-k kernels (short rows and the threshold filter), whose loops run it on every element.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "prim/device/radix_sort/radix_sort.cuh"

namespace gpuprim {

// Made once from a codec: the kind's flips become masks, NaN and zero become selects.
template <typename Bits>
struct KeyEncoder {
  static constexpr uint32_t kAll = uint32_t(Bits(~Bits(0)));
  static constexpr uint32_t kSign = uint32_t(radix_sort::KeyCodec<Bits>::kSign);
  uint32_t sign_flip;      // XORed into every key: kSign for signed and float kinds
  uint32_t negative_flip;  // XORed in instead when the sign bit is set: all bits for floats (~bits)
  uint32_t nan_above;      // floats: +inf's bits (larger magnitudes are NaN); others: all bits (never)
  uint32_t out_flip;       // all bits when descending
  bool is_float;

  // The float's x + 0.0: -0.0 becomes +0.0, every other value stays (NaN stays a NaN). The PTX add
  // has no .ftz: subnormals stay whatever the build's flush-to-zero setting.
  static __host__ __device__ __forceinline__ float canonical_zero(uint32_t bits) {
    float x;
    memcpy(&x, &bits, 4);
#ifdef __CUDA_ARCH__
    float sum;
    asm("add.rn.f32 %0, %1, 0f00000000;" : "=f"(sum) : "f"(x));
    return sum;
#else
    return x + 0.0f;
#endif
  }

  __host__ __device__ __forceinline__ explicit KeyEncoder(const radix_sort::KeyCodec<Bits>& codec)
      : sign_flip(codec.kind == radix_sort::KeyKind::kUnsigned ? 0u : kSign),
        negative_flip(codec.kind == radix_sort::KeyKind::kFloat ? kAll : sign_flip),
        nan_above(codec.kind == radix_sort::KeyKind::kFloat ? uint32_t(codec.inf_bits) : kAll),
        out_flip(codec.descending ? kAll : 0u),
        is_float(codec.kind == radix_sort::KeyKind::kFloat) {}

  // This encoder as one whose codec is known at compile time to be a float kind's when kFloat (is_float a
  // constant: operator()'s integer paths drop out), else as it is.
  template <bool kFloat>
  __host__ __device__ __forceinline__ KeyEncoder known_float() const {
    KeyEncoder encoder = *this;
    if (kFloat) encoder.is_float = true;
    return encoder;
  }

  // The ascending key of the fp32 with these bits, in fewer steps than the integer path: -0.0 made +0.0
  // by an add, NaN by a float compare.
  static __host__ __device__ __forceinline__ uint32_t float_key(uint32_t bits) {
    const float x = canonical_zero(bits);
    uint32_t w;
    memcpy(&w, &x, 4);
    const uint32_t key = w ^ (uint32_t(int32_t(w) >> 31) | 0x80000000u);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
    // sm_90's add returns the canonical NaN 0x7FFFFFFF for every NaN input (any sign or payload; H200
    // probe, 2026-11-30), whose key is already the largest: no select (5% of the short-rows kernel).
    return key;
#else
    return x != x ? 0xFFFFFFFFu : key;  // every NaN the largest key
#endif
  }

  // A bf16's key (2-byte Bits, a bf16 codec): the top half of the fp32 key of the same value (its bits << 16).
  __host__ __device__ __forceinline__ uint32_t bfloat16(Bits bits) const {
    static_assert(sizeof(Bits) == 2, "bf16 keys");
    return (float_key(uint32_t(bits) << 16) >> 16) ^ out_flip;
  }

  __host__ __device__ __forceinline__ uint32_t operator()(Bits bits) const {
    if constexpr (sizeof(Bits) == 4) {
      if (is_float) return float_key(bits) ^ out_flip;  // fp32
    }
    const uint32_t w = uint32_t(bits);
    const uint32_t magnitude = w & (kSign - 1);
    uint32_t key = w ^ ((w & kSign) ? negative_flip : sign_flip);
    key = is_float && magnitude == 0 ? kSign : key;  // -0.0 ranks as +0.0
    key = magnitude > nan_above ? kAll : key;        // every NaN the largest key
    return key ^ out_flip;
  }
};

}  // namespace gpuprim
