// Long segments cut at fixed windows of the rows, without a plan pass: window w holds rows
// [w * window, (w + 1) * window). A segment is long when it has more than `window` rows; a long segment
// overlapping window w then either holds the window's first row or starts inside the window (and, being longer
// than a window, holds its last row), so at most two long segments meet a window: two searches find them.
// Each (segment, window) piece is folded by one worker into partial slot 2 * w (the segment holds the window's
// first row) or 2 * w + 1 (it starts inside), and a second pass folds a segment's slots in window order.
// The cut depends only on the offsets and `window`, never on the grid: results are reproducible.
#pragma once
#include <cstdint>

#include "prim/device/segmented_reduce/segment_offsets.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace segmented {

struct WindowPiece {
  int64_t segment;     // -1: no long segment for this piece
  int64_t begin, end;  // rows of the segment inside the window
  int64_t slot;        // 2 * w + which
};

// segment_of_row (segment_offsets.h) by a whole warp: each step probes 32 starts at once, so a search over
// 64k segments takes 4 dependent loads instead of 16. Every lane returns the segment; all lanes must call it.
__device__ __forceinline__ int64_t warp_segment_of_row(const int64_t* offsets, int64_t segments, int64_t rows,
                                                       int64_t row) {
  const int lane = threadIdx.x % kWarpSize;
  int64_t first = 0, last = segments;  // the first s whose clamped start is > row lies in [first, last]
  while (first < last) {
    const int64_t step = (last - first + kWarpSize - 1) / kWarpSize;
    const int64_t probe = first + (lane + 1) * step - 1;
    bool greater = true;  // a probe at or past `last` stands for `last`
    if (probe < last) {
      const int64_t start = offsets[probe] < 0 ? 0 : (offsets[probe] > rows ? rows : offsets[probe]);
      greater = start > row;
    }
    const unsigned ballot = __ballot_sync(kFullMask, greater);
    if (ballot == 0) {
      first = last;
      break;
    }
    const int k = __ffs(ballot) - 1;  // the answer lies in (probe of lane k - 1, probe of lane k]
    const int64_t probe_k = first + (k + 1) * step - 1;
    first = k > 0 ? first + k * step : first;
    last = probe_k < last ? probe_k : last;
  }
  if (first == 0) return -1;
  int64_t lo, hi;
  segment_bounds(offsets, first - 1, rows, lo, hi);
  return row >= lo && row < hi ? first - 1 : -1;
}

// Piece `which` (0: the long segment holding the window's first row, 1: a long segment starting inside the
// window) of window w, found by a whole warp. Memory-safe for any offsets, exact for valid ones.
__device__ __forceinline__ WindowPiece long_segment_piece(const int64_t* offsets, int64_t segments, int64_t rows,
                                                          int64_t window, int64_t w, int which) {
  const int64_t first = w * window, last = (first + window < rows ? first + window : rows) - 1;
  const int64_t s = warp_segment_of_row(offsets, segments, rows, which == 0 ? first : last);
  WindowPiece piece{-1, 0, 0, 2 * w + which};
  if (s < 0) return piece;
  int64_t lo, hi;
  segment_bounds(offsets, s, rows, lo, hi);
  if (hi - lo <= window || (which == 1 && lo <= first)) return piece;
  piece.segment = s;
  piece.begin = lo > first ? lo : first;
  piece.end = hi < last + 1 ? hi : last + 1;
  return piece;
}

// The slots of a long segment [lo, hi), in window order: slot_of(k) for k < long_segment_slots(...).
__host__ __device__ __forceinline__ int64_t long_segment_slots(int64_t lo, int64_t hi, int64_t window) {
  return (hi - 1) / window - lo / window + 1;
}
__host__ __device__ __forceinline__ int64_t long_segment_slot(int64_t lo, int64_t window, int64_t k) {
  const int64_t w = lo / window + k;
  return 2 * w + (k == 0 && lo > w * window ? 1 : 0);
}

}  // namespace segmented
}  // namespace gpuprim
