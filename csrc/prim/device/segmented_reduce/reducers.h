// The one reducer set of the segmented reductions (segment_reduce, index_add, scatter_*, embedding_bag's
// backward), shared by the CPU kernels and the CUDA kernels so that both compute the same values:
//   a segment (or destination row) receives the reduction, in Acc, of its items in item order, then
//   final = finalize(self, reduction, count): mean divides by the count, index_add scales by alpha, the
//   scatter_reduce forms fold in the destination's own value (include_self).
// Acc is float (fp16/bf16/fp32), double (fp64) or int64_t (every integer dtype; wraps like torch's).
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "prim/util/host_device.h"

namespace gpuprim {

// torch's names: segment_reduce's sum / mean / max / min / prod, scatter_reduce's sum / mean / amax / amin / prod.
enum class Reduce : int8_t { kSum, kMean, kMax, kMin, kProd };

namespace reducers {

// The reduction an item fold performs (mean folds a sum).
template <Reduce R>
struct Op {
  template <typename Acc>
  static GPUPRIM_HD Acc identity() {
    if constexpr (R == Reduce::kMax) {
      if constexpr (std::is_floating_point_v<Acc>) return -std::numeric_limits<Acc>::infinity();
      return std::numeric_limits<Acc>::lowest();
    } else if constexpr (R == Reduce::kMin) {
      if constexpr (std::is_floating_point_v<Acc>) return std::numeric_limits<Acc>::infinity();
      return std::numeric_limits<Acc>::max();
    } else if constexpr (R == Reduce::kProd) {
      return Acc(1);
    } else {
      return Acc(0);
    }
  }
  // max/min propagate NaN (torch.amax): a NaN running value stays, a NaN operand replaces it. Integer sums
  // wrap around in two's complement (as torch's), without signed-overflow UB.
  template <typename Acc>
  static GPUPRIM_HD Acc combine(Acc a, Acc b) {
    if constexpr (R == Reduce::kMax) {
      return (a != a || a > b) ? a : b;
    } else if constexpr (R == Reduce::kMin) {
      return (a != a || a < b) ? a : b;
    } else if constexpr (R == Reduce::kProd) {
      if constexpr (std::is_integral_v<Acc>) {
        return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      } else {
        return a * b;
      }
    } else if constexpr (std::is_integral_v<Acc>) {
      return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else {
      return a + b;
    }
  }
};

// Runtime forms for the CPU kernels.
template <typename Acc>
GPUPRIM_HD Acc identity(Reduce r) {
  if (r == Reduce::kMax) return Op<Reduce::kMax>::identity<Acc>();
  if (r == Reduce::kMin) return Op<Reduce::kMin>::identity<Acc>();
  if (r == Reduce::kProd) return Acc(1);
  return Acc(0);
}
template <typename Acc>
GPUPRIM_HD Acc combine(Reduce r, Acc a, Acc b) {
  if (r == Reduce::kMax) return Op<Reduce::kMax>::combine(a, b);
  if (r == Reduce::kMin) return Op<Reduce::kMin>::combine(a, b);
  if (r == Reduce::kProd) return Op<Reduce::kProd>::combine(a, b);
  return Op<Reduce::kSum>::combine(a, b);
}

template <typename Acc>
GPUPRIM_HD Acc floor_divide(Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    Acc q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return a / b;
  }
}

// The value stored for a destination whose `count` >= 1 items reduce to `acc`, given its own value `self`.
// scale multiplies a sum (index_add's alpha; 1 otherwise); integer mean rounds down (torch.scatter_reduce
// divides integers with rounding_mode="floor"), after wrapping the sum to the element type T as torch's
// in-dtype sum does (its count is not wrapped: torch's count of > 127 int8 items would be).
template <typename T, typename Acc>
GPUPRIM_HD Acc finalize(Reduce r, bool include_self, Acc self, Acc acc, int64_t count, Acc scale) {
  switch (r) {
    case Reduce::kSum: {
      Acc scaled = acc;
      if (scale != Acc(1)) {
        if constexpr (std::is_integral_v<Acc>) {
          scaled = static_cast<Acc>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(scale));
        } else {
          scaled = acc * scale;
        }
      }
      return include_self ? combine(r, self, scaled) : scaled;
    }
    case Reduce::kMean: {
      Acc total = include_self ? combine(Reduce::kSum, self, acc) : acc;
      if constexpr (std::is_integral_v<T> && std::is_integral_v<Acc>) total = static_cast<Acc>(static_cast<T>(total));
      return floor_divide(total, static_cast<Acc>(count + (include_self ? 1 : 0)));
    }
    default: return include_self ? combine(r, self, acc) : acc;
  }
}

// A segment's value without a destination to fold into (segment_reduce): empty segments give 0 for every
// reduction (segment_reduce's wrapper makes prod's 1, torch's empty product), mean divides by the count.
template <typename Acc>
GPUPRIM_HD Acc segment_value(bool mean, Acc acc, int64_t count) {
  if (count == 0) return Acc(0);
  return mean ? acc / static_cast<Acc>(count) : acc;
}

}  // namespace reducers
}  // namespace gpuprim
