// The one key codec: every element type as an unsigned key whose unsigned order is torch's order of the
// type (torch.sort, torch.topk). The rules, here and nowhere else:
//   unsigned integers and bool: the bits as they are;
//   signed integers: the sign bit flipped;
//   floats: the sign-magnitude twiddle (a positive value gets the sign bit set, a negative one every bit
//     flipped), every NaN (any sign or payload) the largest key, so NaN ranks above every number, and
//     -0.0 the key of +0.0 (they compare equal);
//   descending: every key inverted.
// KeyCodec applies them with the kind a run-time value, so one instantiation per key width serves every
// dtype and order (radix sorts, radix selects). KeyEncoder is its branch-free companion, made from a codec,
// for the loops that encode every element of a row (top-k short rows and filter): the same keys, the kind's
// flips as masks and NaN and zero as selects. Host-compilable (the CPU kernels rank with it too).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "prim/util/host_device.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace gpuprim {

enum class KeyKind : int8_t { kUnsigned, kSigned, kFloat };

// The bits of +inf of the float types (a larger magnitude is a NaN).
constexpr uint16_t kFloat16InfBits = 0x7C00;
constexpr uint16_t kBFloat16InfBits = 0x7F80;
constexpr uint32_t kFloat32InfBits = 0x7F800000u;
constexpr uint64_t kFloat64InfBits = 0x7FF0000000000000ull;

// Encodes raw element bits (Bits = the unsigned integer of the element's width) as sort keys.
template <typename Bits>
struct KeyCodec {
  static constexpr Bits kSign = Bits(Bits(1) << (sizeof(Bits) * 8 - 1));
  KeyKind kind;
  Bits inf_bits;  // floats: the bits of +inf; a magnitude above it is a NaN
  bool descending;

  GPUPRIM_HD Bits encode(Bits bits) const {
    Bits key = bits;
    if (kind == KeyKind::kSigned) {
      key = Bits(bits ^ kSign);
    } else if (kind == KeyKind::kFloat) {
      const Bits magnitude = Bits(bits & Bits(~kSign));
      if (magnitude > inf_bits) {
        key = Bits(~Bits(0));  // every NaN: the largest key
      } else if (magnitude == 0) {
        key = kSign;  // -0.0 and +0.0: the key of +0.0
      } else {
        key = (bits & kSign) ? Bits(~bits) : Bits(bits | kSign);
      }
    }
    return descending ? Bits(~key) : key;
  }
  // Whether decode(key) gives back the element's bits; not for NaN (payload and sign are
  // lost) and zero (its sign is lost): those are read from the input instead.
  GPUPRIM_HD bool decodes_exactly(Bits key) const {
    if (kind != KeyKind::kFloat) return true;
    const Bits ascending = descending ? Bits(~key) : key;
    return ascending != Bits(~Bits(0)) && ascending != kSign;
  }
  GPUPRIM_HD Bits decode(Bits key) const {
    const Bits ascending = descending ? Bits(~key) : key;
    if (kind == KeyKind::kSigned) return Bits(ascending ^ kSign);
    if (kind == KeyKind::kFloat) return (ascending & kSign) ? Bits(ascending ^ kSign) : Bits(~ascending);
    return ascending;
  }
};

// A key widened for shuffles and reductions (they take 32- or 64-bit values).
template <typename Bits>
using WideKey = std::conditional_t<sizeof(Bits) <= 4, uint32_t, unsigned long long>;

// KeyCodec's keys of 1-, 2- and 4-byte elements as 32-bit words, without branches. Made once from a codec:
// the kind's flips become masks, NaN and zero become selects.
template <typename Bits>
struct KeyEncoder {
  static constexpr uint32_t kAll = uint32_t(Bits(~Bits(0)));
  static constexpr uint32_t kSign = uint32_t(KeyCodec<Bits>::kSign);
  uint32_t sign_flip;      // XORed into every key: kSign for signed and float kinds
  uint32_t negative_flip;  // XORed in instead when the sign bit is set: all bits for floats (~bits)
  uint32_t nan_above;      // floats: +inf's bits (larger magnitudes are NaN); others: all bits (never)
  uint32_t out_flip;       // all bits when descending
  bool is_float;

  // The float's x + 0.0: -0.0 becomes +0.0, every other value stays (NaN stays a NaN). The PTX add
  // has no .ftz: subnormals stay whatever the build's flush-to-zero setting.
  static GPUPRIM_HD float canonical_zero(uint32_t bits) {
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

  GPUPRIM_HD explicit KeyEncoder(const KeyCodec<Bits>& codec)
      : sign_flip(codec.kind == KeyKind::kUnsigned ? 0u : kSign),
        negative_flip(codec.kind == KeyKind::kFloat ? kAll : sign_flip),
        nan_above(codec.kind == KeyKind::kFloat ? uint32_t(codec.inf_bits) : kAll),
        out_flip(codec.descending ? kAll : 0u),
        is_float(codec.kind == KeyKind::kFloat) {}

  // This encoder as one whose codec is known at compile time to be a float kind's when kFloat (is_float a
  // constant: operator()'s integer paths drop out), else as it is.
  template <bool kFloat>
  GPUPRIM_HD KeyEncoder known_float() const {
    KeyEncoder encoder = *this;
    if (kFloat) encoder.is_float = true;
    return encoder;
  }

  // The ascending key of the fp32 with these bits, in fewer steps than the integer path: -0.0 made +0.0
  // by an add, NaN by a float compare.
  static GPUPRIM_HD uint32_t float_key(uint32_t bits) {
    const float x = canonical_zero(bits);
    uint32_t w;
    memcpy(&w, &x, 4);
    const uint32_t key = w ^ (uint32_t(int32_t(w) >> 31) | 0x80000000u);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
    // sm_90's add returns the canonical NaN 0x7FFFFFFF for every NaN input (any sign or payload), whose
    // key is already the largest: no select.
    return key;
#else
    return x != x ? 0xFFFFFFFFu : key;  // every NaN the largest key
#endif
  }

  // A bf16's key (2-byte Bits, a bf16 codec): the top half of the fp32 key of the same value (its bits << 16).
  GPUPRIM_HD uint32_t bfloat16(Bits bits) const {
    static_assert(sizeof(Bits) == 2, "bf16 keys");
    return (float_key(uint32_t(bits) << 16) >> 16) ^ out_flip;
  }

  GPUPRIM_HD uint32_t operator()(Bits bits) const {
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

// The key of element type T: KeyOf<T>::Bits (its unsigned integer of the same width), kKind and kInfBits.
template <typename T>
struct KeyOf;
template <typename Bits_, KeyKind kKind_, Bits_ kInfBits_ = 0>
struct KeyOfKind {
  using Bits = Bits_;
  static constexpr KeyKind kKind = kKind_;
  static constexpr Bits kInfBits = kInfBits_;
};
template <> struct KeyOf<bool> : KeyOfKind<uint8_t, KeyKind::kUnsigned> {};
template <> struct KeyOf<uint8_t> : KeyOfKind<uint8_t, KeyKind::kUnsigned> {};
template <> struct KeyOf<int8_t> : KeyOfKind<uint8_t, KeyKind::kSigned> {};
template <> struct KeyOf<int16_t> : KeyOfKind<uint16_t, KeyKind::kSigned> {};
template <> struct KeyOf<int32_t> : KeyOfKind<uint32_t, KeyKind::kSigned> {};
template <> struct KeyOf<int64_t> : KeyOfKind<uint64_t, KeyKind::kSigned> {};
template <> struct KeyOf<float> : KeyOfKind<uint32_t, KeyKind::kFloat, kFloat32InfBits> {};
template <> struct KeyOf<double> : KeyOfKind<uint64_t, KeyKind::kFloat, kFloat64InfBits> {};
#if defined(__CUDACC__)
template <> struct KeyOf<__half> : KeyOfKind<uint16_t, KeyKind::kFloat, kFloat16InfBits> {};
template <> struct KeyOf<__nv_bfloat16> : KeyOfKind<uint16_t, KeyKind::kFloat, kBFloat16InfBits> {};
#endif

template <typename T>
using KeyBits = typename KeyOf<T>::Bits;

// The codec of element type T; descending: a smaller element gets the larger key.
template <typename T>
KeyCodec<KeyBits<T>> key_codec(bool descending) {
  return {KeyOf<T>::kKind, KeyOf<T>::kInfBits, descending};
}

}  // namespace gpuprim
