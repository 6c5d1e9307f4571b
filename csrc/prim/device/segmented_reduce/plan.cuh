// How the segmented reductions cut segments into chunks, shared by both front ends (CSR offsets, sorted keys):
// a segment of up to `chunk` items is one chunk, folded and stored by one worker; a longer ("hot") segment
// becomes several chunks, each stored as a partial row, and one combine step folds its partial rows in chunk
// order. So a giant segment spreads over the GPU like many small ones, in an order fixed by the shape alone.
#pragma once
#include <cstdint>

#include "prim/util/host_device.h"

namespace gpuprim {
namespace segmented {

// Per segment, then inclusive-scanned over the segments (integers: exact).
template <typename V>
struct SegmentPlan {
  V chunks;    // chunks of the segment
  V partials;  // partial rows it writes: its chunks when there are several, else 0
  V hot;       // 1 when it has several chunks
};

struct SegmentPlanPlus {
  template <typename P>
  GPUPRIM_HD P operator()(const P& a, const P& b) const {
    return {a.chunks + b.chunks, a.partials + b.partials, a.hot + b.hot};
  }
};

// The plan of a segment of `length` items. An empty segment is one chunk when its result must still be
// stored (`store_empty`: segment_reduce's zero), else none.
template <typename V>
GPUPRIM_HD SegmentPlan<V> plan_segment(int64_t length, int64_t chunk, bool store_empty) {
  const int64_t chunks = length == 0 ? (store_empty ? 1 : 0) : (length + chunk - 1) / chunk;
  const bool hot = chunks > 1;
  return {static_cast<V>(chunks), static_cast<V>(hot ? chunks : 0), static_cast<V>(hot ? 1 : 0)};
}

// The first segment s in [0, segments) whose scanned field exceeds `target` (fields never decrease).
template <typename V, typename Field>
__device__ __forceinline__ int64_t find_segment(const SegmentPlan<V>* scanned, int64_t segments, int64_t target,
                                                Field field) {
  int64_t first = 0, last = segments;
  while (first < last) {
    const int64_t mid = first + (last - first) / 2;
    if (int64_t(field(scanned[mid])) > target) last = mid; else first = mid + 1;
  }
  return first;
}

}  // namespace segmented
}  // namespace gpuprim
