// Element-wise rules of the index reductions (index_add, scatter_add, scatter_reduce), shared by the CPU
// kernels and the CUDA kernels of prim/index_reduce.cuh so that both compute the same values:
//   every destination row receives the reduction (in Acc) of the source rows that point at it, then
//   final = finalize(self, reduction, count), and rows that receive nothing keep self.
// Acc is float (fp16/bf16/fp32), double (fp64) or int64_t (every integer dtype; wraps like torch's).
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "prim/util/host_device.h"


namespace gpuprim {

// The reductions of torch.scatter_reduce (without prod); index_add is kSum with a scale (alpha).
enum class IndexReduce : int8_t { kSum, kMean, kMax, kMin };

namespace index_reduce {

template <typename Acc>
GPUPRIM_HD Acc identity(IndexReduce op) {
  if constexpr (std::is_floating_point_v<Acc>) {
    if (op == IndexReduce::kMax) return -std::numeric_limits<Acc>::infinity();
    if (op == IndexReduce::kMin) return std::numeric_limits<Acc>::infinity();
  } else {
    if (op == IndexReduce::kMax) return std::numeric_limits<Acc>::lowest();
    if (op == IndexReduce::kMin) return std::numeric_limits<Acc>::max();
  }
  return Acc(0);
}

// max/min propagate NaN (as torch.scatter_reduce amax/amin): a NaN running value stays, a NaN operand wins.
template <typename Acc>
GPUPRIM_HD Acc combine(IndexReduce op, Acc a, Acc b) {
  if (op == IndexReduce::kMax) return (a != a || a > b) ? a : b;
  if (op == IndexReduce::kMin) return (a != a || a < b) ? a : b;
  if constexpr (std::is_integral_v<Acc>) {
    // Two's-complement wrap-around (as torch's integer adds), without signed-overflow UB.
    return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
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

// The value stored for a destination that received `count` >= 1 source rows whose reduction is `acc`.
// scale multiplies the reduction for kSum (index_add's alpha; 1 for scatter_*); integer mean rounds down
// (torch.scatter_reduce divides integers with rounding_mode="floor"), after wrapping the sum to the element
// type T as torch's in-dtype sum does (its count is not wrapped: torch's count of > 127 int8 items would be).
template <typename T, typename Acc>
GPUPRIM_HD Acc finalize(IndexReduce op, bool include_self, Acc self, Acc acc, int64_t count, Acc scale) {
  switch (op) {
    case IndexReduce::kSum: {
      Acc scaled = acc;
      if (scale != Acc(1)) {
        if constexpr (std::is_integral_v<Acc>) {
          scaled = static_cast<Acc>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(scale));
        } else {
          scaled = acc * scale;
        }
      }
      return include_self ? combine(op, self, scaled) : scaled;
    }
    case IndexReduce::kMean: {
      Acc total = include_self ? combine(IndexReduce::kSum, self, acc) : acc;
      if constexpr (std::is_integral_v<T> && std::is_integral_v<Acc>) total = static_cast<Acc>(static_cast<T>(total));
      return floor_divide(total, static_cast<Acc>(count + (include_self ? 1 : 0)));
    }
    default: return include_self ? combine(op, self, acc) : acc;
  }
}

}  // namespace index_reduce
}  // namespace gpuprim
