// Merge-path partitioning of a CSR matrix (host and device): the walk over rows + nonzeros that ends a row
// after its last nonzero is cut into tiles of equal length, so every tile has the same work whatever the
// row-length skew, with no preprocessing. A tile starts at the coordinate (row, nz) found by a binary search
// on its diagonal: rows [0, row) are finished, nonzeros [0, nz) consumed.
//
// The summation order this defines (CPU and CUDA alike): a row's nonzeros are cut at the tile boundaries
// that fall strictly inside them; each piece is folded left to right from the identity, and the non-empty
// pieces are folded left to right.
#pragma once
#include <cstdint>

#include "prim/util/host_device.h"

namespace gpuprim {
namespace merge_path {

struct Coord {
  int64_t row, nz;
};

// crow[r], clamped into [0, nnz] so that offsets that break the CSR rules never lead a walk out of bounds.
template <typename I>
GPUPRIM_HD int64_t clamped_offset(const I* crow, int64_t r, int64_t nnz) {
  const int64_t v = static_cast<int64_t>(crow[r]);
  return v < 0 ? 0 : (v > nnz ? nnz : v);
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

// Tiles of `items` merge items covering rows + nonzeros.
GPUPRIM_HD int64_t tile_count(int64_t rows, int64_t nnz, int64_t items) {
  return (rows + nnz + items - 1) / items;
}

}  // namespace merge_path
}  // namespace gpuprim
