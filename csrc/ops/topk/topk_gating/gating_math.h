// The arithmetic of gpuprim::topk_gating, shared by its CPU and CUDA kernels so that both give the
// same bits: an exp built only from IEEE operations that round the same way on both (explicit fmaf,
// no multiply-add left for a compiler to contract), the ranking key of a logit, and a fixed order
// for every sum (the full softmax denominator: 32 lane-strided partial sums, then a butterfly tree,
// exactly what one warp computes).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "prim/util/host_device.h"
#include "prim/util/key_codec.cuh"

namespace gpuprim {
namespace gating {

enum class Score : int8_t { kSoftmax, kSigmoid };

constexpr int kLanes = 32;  // the full softmax sum's partial sums (one per warp lane)

// A product rounded to fp32 on its own: never fused into a following add (nvcc's -fmad, or a host
// compiler's -ffp-contract on targets with FMA), which would change the bits on one device only.
GPUPRIM_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  volatile float product = a * b;
  return product;
#endif
}

// The same bits as another type of the same width (a register move on the device).
template <typename To, typename From>
GPUPRIM_HD To same_bits(From from) {
  static_assert(sizeof(To) == sizeof(From), "same width");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}
GPUPRIM_HD float bits_to_float(uint32_t bits) { return same_bits<float>(bits); }
GPUPRIM_HD uint32_t float_to_bits(float f) { return same_bits<uint32_t>(f); }

// Ranking key of a logit: the key codec's (larger key = better, torch's order: NaN the largest key,
// -0.0 the key of +0.0).
GPUPRIM_HD uint32_t logit_key(float logit) {
  return KeyCodec<uint32_t>{KeyKind::kFloat, kFloat32InfBits, /*descending=*/false}.encode(float_to_bits(logit));
}

// exp(x) in fp32 within ~1 ulp, the same bits on every device: results below 2^-126 (x < -87)
// flush to 0, overflow gives +inf, NaN stays NaN. x = n ln2 + r with |r| <= ln2/2, a degree-7
// polynomial for exp(r), then two exact power-of-two scalings.
GPUPRIM_HD float exp_fp32(float x) {
  if (!(x == x)) return x;
  if (x > 88.72283935546875f) return INFINITY;
  if (x < -87.0f) return 0.0f;
  const float n = rintf(mul_rn(x, 1.44269502162933349609375f));  // round(x / ln2), in [-126, 128]
  float r = fmaf(n, -0.693145751953125f, x);                     // ln2 split in a short high part (exact n * hi)
  r = fmaf(n, -1.428606765330187045e-06f, r);                    // and the rest
  float p = 1.98412698e-4f;                                      // 1/7!
  p = fmaf(p, r, 1.38888889e-3f);                                // 1/6!
  p = fmaf(p, r, 8.33333333e-3f);                                // 1/5!
  p = fmaf(p, r, 4.16666667e-2f);                                // 1/4!
  p = fmaf(p, r, 1.66666667e-1f);                                // 1/3!
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  const int e = static_cast<int>(n);
  const int half = e / 2;  // 2^e = 2^half * 2^(e - half), each a normal float for e in [-126, 128]
  const float scale_a = bits_to_float(static_cast<uint32_t>(half + 127) << 23);
  const float scale_b = bits_to_float(static_cast<uint32_t>(e - half + 127) << 23);
  const float scaled = mul_rn(p, scale_a);  // exact: stays normal and finite
  return mul_rn(scaled, scale_b);           // rounded once (to a normal number or inf)
}

GPUPRIM_HD float sigmoid_fp32(float x) {
  const float t = exp_fp32(-x);
  const float denominator = 1.0f + t;
  return 1.0f / denominator;
}

// A sum rounded on its own (the device's add is never contracted with a neighbouring multiply).
GPUPRIM_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// The float of a ranking key: logit_key's inverse (zero comes back as +0.0, every NaN as one NaN).
GPUPRIM_HD float key_value(uint32_t key) {
  return bits_to_float(KeyCodec<uint32_t>{KeyKind::kFloat, kFloat32InfBits, /*descending=*/false}.decode(key));
}

// Keeps the two largest keys seen, first >= second; 0 means none (logit_key never returns 0). The result
// depends only on the set of keys offered, not on their order, so a warp can merge lanes' pairs in any order.
GPUPRIM_HD void keep_top2(uint32_t key, uint32_t& first, uint32_t& second) {
  if (key > first) {
    second = first;
    first = key;
  } else if (key > second) {
    second = key;
  }
}

// A group's score in group-limited routing: the sum of its two best biased scores (its best alone for a group
// of one expert).
GPUPRIM_HD float top2_sum(uint32_t first, uint32_t second) {
  return second != 0 ? add_rn(key_value(first), key_value(second)) : key_value(first);
}

// The unnormalised score of a selected logit: exp(logit - max) for softmax, sigmoid(logit).
GPUPRIM_HD float raw_score(Score score, float logit, float max_logit) {
  if (score == Score::kSoftmax) {
    const float shifted = logit - max_logit;
    return exp_fp32(shifted);
  }
  return sigmoid_fp32(logit);
}

}  // namespace gating
}  // namespace gpuprim
