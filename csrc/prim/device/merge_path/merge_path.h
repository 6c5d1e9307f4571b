// Merge-path partitioning of a CSR matrix (host and device): the walk over rows + nonzeros that ends a row
// after its last nonzero is cut into ranges of equal length, so every range has about the same work whatever
// the row-length skew, with no preprocessing. A range starts at the coordinate (row, nz) found by a binary
// search on its diagonal: rows [0, row) are finished, nonzeros [0, nz) consumed. spmm gives each range's
// finished rows to one group of lanes (rows longer than a chunk go to a split pass); the summation order is
// row_order.h's, independent of the ranges.
#pragma once
#include <cstdint>

#include "prim/util/host_device.h"

namespace gpuprim {
namespace merge_path {

struct Coord {
  int64_t row, nz;
};

// A crow entry clamped into [0, nnz] so that offsets that break the CSR rules never lead a walk out of bounds.
template <typename I>
GPUPRIM_HD int64_t clamp_offset(I entry, int64_t nnz) {
  const int64_t v = static_cast<int64_t>(entry);
  return v < 0 ? 0 : (v > nnz ? nnz : v);
}

template <typename I>
GPUPRIM_HD int64_t clamped_offset(const I* crow, int64_t r, int64_t nnz) {
  return clamp_offset(crow[r], nnz);
}

// The coordinate on `diagonal` (0 <= diagonal <= rows + nnz): row ends crow[1..rows] merged with the nonzero
// positions 0..nnz-1, a row end going first when crow[r + 1] <= the position (so empty rows end at once).
template <typename I>
GPUPRIM_HD Coord search(int64_t diagonal, const I* crow, int64_t rows, int64_t nnz) {
  int64_t lo = diagonal > nnz ? diagonal - nnz : 0;
  int64_t hi = diagonal < rows ? diagonal : rows;
  while (lo < hi) {
    const int64_t pivot = lo + (hi - lo) / 2;
    if (clamped_offset(crow, pivot + 1, nnz) <= diagonal - pivot - 1) lo = pivot + 1; else hi = pivot;
  }
  return {lo, diagonal - lo};
}

// The first row that range `range` of `ranges` equal ranges finishes (range == ranges: rows).
template <typename I>
GPUPRIM_HD int64_t range_first_row(int64_t range, int64_t ranges, const I* crow, int64_t rows, int64_t nnz) {
  const int64_t total = rows + nnz;
  const int64_t span = (total + ranges - 1) / ranges;
  const int64_t diagonal = range * span < total ? range * span : total;
  return search(diagonal, crow, rows, nnz).row;
}

}  // namespace merge_path
}  // namespace gpuprim
