// Warp-wide scans in a fixed order (Hillis-Steele): lane q's result depends only on lanes 0..q, so float
// results are the same bits on every run. Every lane of the warp must call them (full mask).
#pragma once
#include "prim/util/launch.h"

namespace gpuprim {
namespace warp {

template <typename Value>
__device__ __forceinline__ Value inclusive_scan(Value v) {
  const int lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const Value up = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= offset) v = v + up;
  }
  return v;
}

// The exclusive scan (Value(0) on lane 0) and, in `total`, the sum of the whole warp.
template <typename Value>
__device__ __forceinline__ Value exclusive_scan(Value v, Value& total) {
  const Value inclusive = inclusive_scan(v);
  total = __shfl_sync(kFullMask, inclusive, kWarpSize - 1);
  return inclusive - v;
}

}  // namespace warp
}  // namespace gpuprim
