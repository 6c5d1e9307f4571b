// How CSR segment offsets are read, shared by CPU and CUDA kernels (ATen-free, host and device), so that
// bad offsets never read or write out of bounds and both devices treat them alike.
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define GPUPRIM_HOST_DEVICE __host__ __device__
#else
#define GPUPRIM_HOST_DEVICE
#endif

namespace gpuprim {

// Rows [lo, hi) of segment s: offsets clamped into [0, rows]; a decreasing pair gives an empty segment.
GPUPRIM_HOST_DEVICE inline void segment_bounds(const int64_t* offsets, int64_t s, int64_t rows, int64_t& lo,
                                               int64_t& hi) {
  const int64_t a = offsets[s], b = offsets[s + 1];
  lo = a < 0 ? 0 : (a > rows ? rows : a);
  hi = b < lo ? lo : (b > rows ? rows : b);
}

// The segment holding `row`: the last s whose clamped start is <= row, if row is below its end; -1 when
// none. A binary search, exact for valid (non-decreasing) offsets and memory-safe for any.
GPUPRIM_HOST_DEVICE inline int64_t segment_of_row(const int64_t* offsets, int64_t segments, int64_t rows,
                                                  int64_t row) {
  int64_t first = 0, last = segments;  // the first s whose start is > row
  while (first < last) {
    const int64_t mid = first + (last - first) / 2;
    const int64_t start = offsets[mid] < 0 ? 0 : (offsets[mid] > rows ? rows : offsets[mid]);
    if (start <= row) first = mid + 1; else last = mid;
  }
  if (first == 0) return -1;
  int64_t lo, hi;
  segment_bounds(offsets, first - 1, rows, lo, hi);
  return row >= lo && row < hi ? first - 1 : -1;
}

}  // namespace gpuprim
