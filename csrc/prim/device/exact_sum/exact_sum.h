// Order-independent ("canonical") floating-point summation, shared verbatim by the CPU kernel
// (ops/reduce/sum/sum_cpu.cpp) and the CUDA kernels (exact_sum_kernels.cuh), so both give the same bits.
//
// Binned summation in the style of Demmel and Nguyen (ReproBLAS), with integer bins:
//  * A fixed global grid: bin t has the quantum g(t) = 2^(32 t - 1074), t = 0 .. 65.
//  * The top bin T of a set of values is the smallest t >= K-1 with max|x| < 2^31 g(t); it is a
//    function of max|x| only, so it is the same whatever the order or chunking.
//  * Each value x is split into K slices: q_0 = RN(x / g(T)) (round to nearest even, an integer
//    |q_0| <= 2^31), then q_k = RN(r_k / g(T-k)) of the remainder r_k = r_{k-1} - q_{k-1} g(T-k+1).
//    Bin k holds the int64 sum of the q_k. The slices depend on x and T alone.
//  * Raising T by d (a larger value arrived) moves bin k to bin k+d and drops the bins that fall
//    off the bottom: exactly what slicing every earlier value with the new T gives, because a value
//    below the old limit has no slice in the new top bins (|x| < g(T_new)/2).
//  So any two partial states (T, counts) merge exactly (align to the larger T, add the counts),
//  the merged state is the same for every chunking and order, and one final rounding of
//  sum_k count_k g(T-k) to the output format gives the same bits everywhere.
//
// Error: each value loses at most g(T-K+1)/2 <= 2^(-32(K-1)) max|x|, i.e. 2^-32 max|x| for 16/32-bit
// inputs (K = 2) and 2^-64 max|x| for fp64 (K = 3); sums whose values all lie within 2^(32(K-1)-24)
// (fp32) of the maximum are exact before the final rounding (the single rounding of the exact sum).
//
// The slicing uses the anchor trick: with A = 1.5 * 2^52 * g, A + r (|r| < 2^31 g) stays in A's
// binade, so RN(A + r) rounds r to the grid g, and bits(A + r) - bits(A) is the integer RN(r / g).
// For the two top bins (values near the fp64 maximum) the anchor would overflow, so values are first
// scaled by 2^-128 (exact for every value that has a slice in those bins; smaller ones round to 0).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "prim/util/dtype.h"
#include "prim/util/host_device.h"

#if defined(__CUDA_ARCH__)
#define GPUPRIM_UNROLL _Pragma("unroll")
#else
#define GPUPRIM_UNROLL
#endif

namespace gpuprim {
namespace exact_sum {

constexpr int kBinBits = 32;
constexpr int kGridBias = 1074;  // g(0) = 2^-1074, the smallest fp64 subnormal
constexpr int kMaxTop = 65;      // g(65) * 2^31 > the largest fp64
constexpr int kScaledTop = 64;   // from this top on, values are scaled by 2^-128 (anchors would overflow)
constexpr int kScaleExp = -128;

enum Flags : uint32_t { kNaN = 1, kPosInf = 2, kNegInf = 4 };

// Bins per input type: two for 16/32-bit floats, three for fp64 (see the error note above).
template <typename T> struct BinsFor { static constexpr int value = 2; };
template <> struct BinsFor<double> { static constexpr int value = 3; };

// The bits of `from` as a To of the same size (a register move on the device).
template <typename To, typename From>
GPUPRIM_HD To bit_copy(From from) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}
GPUPRIM_HD uint64_t double_bits(double v) { return bit_copy<uint64_t>(v); }
GPUPRIM_HD double double_from_bits(uint64_t bits) { return bit_copy<double>(bits); }

GPUPRIM_HD double ldexp2(double v, int e) {
#if defined(__CUDA_ARCH__)
  return ::ldexp(v, e);
#else
  return std::ldexp(v, e);
#endif
}

// 2^e and 1.5 * 2^e for normal exponents (-1022 <= e <= 1023), built from bits: exact and cheap.
GPUPRIM_HD double pow2_normal(int e, bool one_and_half = false) {
  return double_from_bits((uint64_t(e + 1023) << 52) | (one_and_half ? uint64_t(1) << 51 : 0));
}

// The one NaN both kernels return (quiet, positive); stores write each format's canonical NaN bits
// (kNaNBits*) explicitly, since CPU and GPU conversions disagree on NaN payloads.
GPUPRIM_HD double canonical_nan() { return double_from_bits(0x7ff8000000000000ull); }
constexpr uint32_t kNaNBitsFloat32 = 0x7fc00000u;
constexpr uint16_t kNaNBitsFloat16 = 0x7e00u;
constexpr uint16_t kNaNBitsBFloat16 = 0x7fc0u;

// Smallest top bin whose limit 2^31 g(t) = 2^(32 t - 1043) exceeds |x| (x finite).
GPUPRIM_HD int top_for(double x) {
  const int biased = int((double_bits(x) >> 52) & 0x7ff);
  if (biased == 0) return 0;  // zero or subnormal: any top works
  const int exponent = biased - 1023;  // 2^exponent <= |x| < 2^(exponent+1)
  return (exponent + 1075) / kBinBits;  // ceil((exponent + 1044) / 32), exponent + 1075 > 0
}

// A partial sum in canonical form: the value sum_k count[k] * g(top - k), plus non-finite flags.
template <int K>
struct State {
  int32_t top;
  uint32_t flags;
  int64_t count[K];
};

template <int K>
GPUPRIM_HD State<K> empty_state() {
  State<K> s;
  s.top = K - 1;
  s.flags = 0;
GPUPRIM_UNROLL
  for (int k = 0; k < K; ++k) s.count[k] = 0;
  return s;
}

// count'[k] = count[k - shift] (0 where k < shift): the bins seen from a top `shift` higher.
// Written as selects over the few possible shifts, so no register array is indexed dynamically.
template <int K, typename Int>
GPUPRIM_HD void shift_bins(Int (&count)[K], int shift) {
  Int shifted[K];
GPUPRIM_UNROLL
  for (int k = 0; k < K; ++k) {
    Int v = 0;
GPUPRIM_UNROLL
    for (int j = 0; j <= k; ++j) v = (shift == k - j) ? count[j] : v;
    shifted[k] = v;
  }
GPUPRIM_UNROLL
  for (int k = 0; k < K; ++k) count[k] = shifted[k];
}

// The per-thread accumulator: adds values one at a time. Holds the anchors of the current top and
// raw sums of bits(anchor + slice); `normalize` turns them into true counts (mod 2^64 arithmetic).
template <int K>
struct Accumulator {
  int top;
  uint32_t flags;
  double scale;     // 1, or 2^-128 for the two highest tops
  double limit;     // values with |x| >= limit (or non-finite) need the slow path
  double anchor[K]; // 1.5 * 2^52 * g(top - k) * scale
  uint64_t raw[K];  // sum of bits(anchor[k] + slice), minus deposits * bits(anchor[k]) at normalize
  uint64_t deposits;

  GPUPRIM_HD void init() {
    flags = 0;
    deposits = 0;
GPUPRIM_UNROLL
    for (int k = 0; k < K; ++k) raw[k] = 0;
    set_top(K - 1);
  }

  GPUPRIM_HD void set_top(int t) {
    top = t;
    const int scale_exp = t >= kScaledTop ? kScaleExp : 0;
    scale = pow2_normal(scale_exp);
    const int limit_exp = kBinBits * t - kGridBias + (kBinBits - 1);
    limit = limit_exp > 1023 ? INFINITY : pow2_normal(limit_exp);
    // Anchor exponents stay in [-1022, 994]: K - 1 <= t <= 65, scaled by 2^-128 from t = 64 on.
GPUPRIM_UNROLL
    for (int k = 0; k < K; ++k) anchor[k] = pow2_normal(52 + kBinBits * (t - k) - kGridBias + scale_exp, true);
  }

  GPUPRIM_HD void normalize() {
GPUPRIM_UNROLL
    for (int k = 0; k < K; ++k) raw[k] -= deposits * double_bits(anchor[k]);
    deposits = 0;
  }

  // Rare path, for values that do not fit: non-finite ones set a flag and count as 0; finite ones
  // raise the wanted top `t` (applied by raise_top, once for a group of values).
  GPUPRIM_HD double screen(double x, int& t) {
    if (x != x) { flags |= kNaN; return 0.0; }
    if (x == INFINITY) { flags |= kPosInf; return 0.0; }
    if (x == -INFINITY) { flags |= kNegInf; return 0.0; }
    const int needed = top_for(x);
    t = needed > t ? needed : t;
    return x;
  }

  GPUPRIM_HD void raise_top(int t) {
    if (t <= top) return;
    normalize();
    int64_t counts[K];
GPUPRIM_UNROLL
    for (int k = 0; k < K; ++k) counts[k] = static_cast<int64_t>(raw[k]);
    shift_bins<K>(counts, t - top);
GPUPRIM_UNROLL
    for (int k = 0; k < K; ++k) raw[k] = static_cast<uint64_t>(counts[k]);
    set_top(t);
  }

  // |x| < limit: slice x into the bins. Every operation is exact except the roundings to the grids.
  // The caller counts the deposit in `deposits` (add, add_values).
  GPUPRIM_HD void deposit(double x) {
    // 16/32-bit inputs (K = 2) stay below 2^128, so their top stays <= 37 and is never scaled.
    double r = K >= 3 ? x * scale : x;
GPUPRIM_UNROLL
    for (int k = 0; k < K; ++k) {
      const double v = r + anchor[k];
      raw[k] += double_bits(v);
      if (k + 1 < K) r = r - (v - anchor[k]);
    }
  }

  GPUPRIM_HD bool fits(double x) const { return fabs(x) < limit; }  // false for inf and NaN too

  GPUPRIM_HD void add(double x) {
    if (!fits(x)) {
      int t = top;
      x = screen(x, t);
      raise_top(t);
    }
    deposit(x);
    ++deposits;
  }

  // N values at once: one range check for all of them, then N independent deposits.
  template <int N>
  GPUPRIM_HD void add_values(double (&x)[N]) {
    bool all_fit = true;
GPUPRIM_UNROLL
    for (int j = 0; j < N; ++j) all_fit &= fits(x[j]);  // no short circuit: one branch
    if (!all_fit) {
      int t = top;
GPUPRIM_UNROLL
      for (int j = 0; j < N; ++j) x[j] = fits(x[j]) ? x[j] : screen(x[j], t);
      raise_top(t);
    }
GPUPRIM_UNROLL
    for (int j = 0; j < N; ++j) deposit(x[j]);
    deposits += N;
  }

  GPUPRIM_HD State<K> state() {
    normalize();
    State<K> s;
    s.top = top;
    s.flags = flags;
GPUPRIM_UNROLL
    for (int k = 0; k < K; ++k) s.count[k] = static_cast<int64_t>(raw[k]);
    return s;
  }
};

// Wide form for combining many partial states (any number of values).
template <int K>
struct WideState {
  int32_t top;
  uint32_t flags;
  __int128 count[K];
};

template <int K>
GPUPRIM_HD WideState<K> widen(const State<K>& s) {
  WideState<K> w;
  w.top = s.top;
  w.flags = s.flags;
GPUPRIM_UNROLL
  for (int k = 0; k < K; ++k) w.count[k] = s.count[k];
  return w;
}

// Merges b into a: two States (int64 counts: callers keep the number of values merged < 2^31) or two
// WideStates.
template <template <int> class StateOf, int K>
GPUPRIM_HD void merge(StateOf<K>& a, StateOf<K> b) {
  if (b.top > a.top) {
    shift_bins<K>(a.count, b.top - a.top);
    a.top = b.top;
  } else {
    shift_bins<K>(b.count, a.top - b.top);
  }
  a.flags |= b.flags;
GPUPRIM_UNROLL
  for (int k = 0; k < K; ++k) a.count[k] += b.count[k];
}

// Target formats of the final rounding.
struct Format {
  int precision;    // significand bits, including the implicit one
  int min_lsb_exp;  // exponent of the smallest subnormal
  int max_exp;      // largest finite values are < 2^(max_exp + 1)
};
GPUPRIM_HD constexpr Format float64_format() { return Format{53, -1074, 1023}; }
GPUPRIM_HD constexpr Format float32_format() { return Format{24, -149, 127}; }
GPUPRIM_HD constexpr Format float16_format() { return Format{11, -24, 15}; }
GPUPRIM_HD constexpr Format bfloat16_format() { return Format{8, -133, 127}; }

GPUPRIM_HD Format format_of(DType type) {
  switch (type) {
    case DType::kFloat16: return float16_format();
    case DType::kBFloat16: return bfloat16_format();
    case DType::kFloat32: return float32_format();
    default: return float64_format();
  }
}

GPUPRIM_HD int leading_bit(uint64_t v) {  // index of the highest set bit, v != 0
#if defined(__CUDA_ARCH__)
  return 63 - __clzll(static_cast<long long>(v));
#else
  return 63 - __builtin_clzll(v);
#endif
}

// Word i of a 256-bit number, 0 outside [0, 4); selects instead of a dynamically indexed array.
GPUPRIM_HD uint64_t word_at(const uint64_t (&mag)[4], int i) {
  return i == 0 ? mag[0] : i == 1 ? mag[1] : i == 2 ? mag[2] : i == 3 ? mag[3] : 0;
}

// Bits [from, from + 64) of a 256-bit number (from >= 0).
GPUPRIM_HD uint64_t bits_from(const uint64_t (&mag)[4], int from) {
  const int word = from >> 6, bit = from & 63;
  const uint64_t low = word_at(mag, word) >> bit;
  return bit == 0 ? low : low | (word_at(mag, word + 1) << (64 - bit));
}

// Rounds (-1)^negative * mag * 2^base_exp (mag: 256-bit, little-endian words) to nearest even in
// `format`; returns it as a double (exactly representable in the format, +-inf on overflow).
GPUPRIM_HD double round_to_format(bool negative, const uint64_t (&mag)[4], int base_exp, Format format) {
  const int msb = mag[3] ? 192 + leading_bit(mag[3])
                : mag[2] ? 128 + leading_bit(mag[2])
                : mag[1] ? 64 + leading_bit(mag[1])
                : mag[0] ? leading_bit(mag[0]) : -1;
  if (msb < 0) return 0.0;  // an exact zero is +0, as torch.sum gives for all -0.0
  int lsb_exp = msb + base_exp - (format.precision - 1);
  if (lsb_exp < format.min_lsb_exp) lsb_exp = format.min_lsb_exp;
  const int drop = lsb_exp - base_exp;  // low bits of mag below the result's last place
  if (drop > msb + 1) return negative ? -0.0 : 0.0;  // below half the smallest subnormal: underflow
  uint64_t mant;
  if (drop <= 0) {
    mant = mag[0] << (-drop);  // msb < precision - drop <= 53 bits here
  } else {
    // Bits [drop, msb] (at most `precision` of them), the half bit, and the sticky bits below it.
    const int width = msb - drop + 1;  // 0 .. precision
    mant = width == 0 ? 0 : bits_from(mag, drop) & ((uint64_t(1) << width) - 1);
    const int half_at = drop - 1;
    const bool half = (bits_from(mag, half_at) & 1) != 0;
    const int half_word = half_at >> 6, half_bit = half_at & 63;
    bool sticky = (word_at(mag, half_word) & ((uint64_t(1) << half_bit) - 1)) != 0;
GPUPRIM_UNROLL
    for (int w = 0; w < 3; ++w) sticky = sticky || (w < half_word && mag[w] != 0);
    if (half && (sticky || (mant & 1))) ++mant;
  }
  // mant <= 2^precision; the value mant * 2^lsb_exp overflows the format at 2^(max_exp + 1).
  const int top_exp = lsb_exp + format.precision;  // mant * 2^lsb_exp < 2^top_exp, or == after carry
  double value;
  if (top_exp > format.max_exp + 1 ||
      (top_exp == format.max_exp + 1 && mant >= (uint64_t(1) << format.precision))) {
    value = INFINITY;
  } else {
    value = ldexp2(static_cast<double>(mant), lsb_exp);
  }
  return negative ? -value : value;
}

// The final rounding of a canonical state: sum_k count[k] * g(top - k), or NaN / +-inf.
template <int K>
GPUPRIM_HD double finish(const WideState<K>& s, Format format) {
  const bool pos_inf = s.flags & kPosInf, neg_inf = s.flags & kNegInf;
  if ((s.flags & kNaN) || (pos_inf && neg_inf)) return canonical_nan();
  if (pos_inf) return INFINITY;
  if (neg_inf) return -INFINITY;
  // 256-bit two's complement of sum_k count[k] * 2^(32 (K-1-k)), in units of g(top - K + 1).
  uint64_t acc[4] = {0, 0, 0, 0};
GPUPRIM_UNROLL
  for (int k = 0; k < K; ++k) {
    const unsigned __int128 c = static_cast<unsigned __int128>(s.count[k]);
    const uint64_t fill = s.count[k] < 0 ? ~uint64_t(0) : 0;
    uint64_t term[5] = {uint64_t(c), uint64_t(c >> 64), fill, fill, fill};
    const int shift = kBinBits * (K - 1 - k);  // 0, 32 or 64
    uint64_t shifted[4];
    const int words = shift / 64, bits = shift % 64;
    for (int w = 0; w < 4; ++w) {
      const int src = w - words;
      const uint64_t lo = src >= 0 ? term[src] : 0;
      const uint64_t below = src - 1 >= 0 ? term[src - 1] : 0;
      shifted[w] = bits == 0 ? lo : (lo << bits) | (below >> (64 - bits));
    }
    uint64_t carry = 0;
    for (int w = 0; w < 4; ++w) {
      const uint64_t sum = acc[w] + shifted[w];
      const uint64_t c1 = sum < acc[w];
      const uint64_t total = sum + carry;
      const uint64_t c2 = total < sum;
      acc[w] = total;
      carry = c1 | c2;
    }
  }
  const bool negative = (acc[3] >> 63) != 0;
  if (negative) {  // magnitude = ~acc + 1
    uint64_t carry = 1;
    for (int w = 0; w < 4; ++w) {
      const uint64_t inv = ~acc[w];
      acc[w] = inv + carry;
      carry = (carry && acc[w] == 0) ? 1 : 0;
    }
  }
  return round_to_format(negative, acc, kBinBits * (s.top - K + 1) - kGridBias, format);
}

// Rounds a finite or non-finite double to `format` (used after the division of mean).
GPUPRIM_HD double round_double_to_format(double v, Format format) {
  if (!(v - v == 0.0)) return v;  // inf or nan pass through
  const uint64_t bits = double_bits(v);
  const int biased = int((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & ((uint64_t(1) << 52) - 1);
  if (biased != 0) mantissa |= uint64_t(1) << 52;
  const int exp = (biased == 0 ? 1 : biased) - 1075;
  const uint64_t mag[4] = {mantissa, 0, 0, 0};
  return round_to_format((bits >> 63) != 0, mag, exp, format);
}

// A row's result in `format` (exactly representable there): its sum rounded once, or for a mean its sum rounded to
// float64, divided by `count` and rounded again.
template <int K>
GPUPRIM_HD double finish_value(const WideState<K>& s, bool mean, int64_t count, Format format) {
  const double value = finish(s, mean ? float64_format() : format);
  return mean ? round_double_to_format(value / static_cast<double>(count), format) : value;
}

}  // namespace exact_sum
}  // namespace gpuprim
