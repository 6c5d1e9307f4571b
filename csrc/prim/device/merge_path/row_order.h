// The summation order of a CSR row product (spmm), shared by the CPU and CUDA kernels so that both give the same
// bits, and a function of the row alone (not of the grid, the GPU or the rows around it):
//   a row's nonzeros are cut into chunks of chunk_size(F) from its first one; each chunk reduces to one value
//   per column; the chunk values fold left to right (the first taken as it is); mean then divides by the
//   row's length, and an empty row gives 0.
// A chunk's reduction, with fused multiply-adds for weighted sums (fma(v, x, acc); unweighted: acc + x;
// max/min: combine(acc, v * x)):
//   F == 1 (lane chunks): kLanes lanes, lane v folds the chunk's positions v, v + kLanes, ... left to right
//     from the identity; then for offset kLanes / 2, ..., 2, 1 lane v < offset becomes combine(lane v,
//     lane v + offset), and lane 0 holds the value (a warp's shuffle-down tree);
//   F > 1 (column chunks): each column folds the chunk's nonzeros left to right from the identity.
#pragma once
#include <cstdint>

#include "prim/util/host_device.h"

namespace gpuprim {
namespace merge_path {

struct RowOrder {
  static constexpr int kLanes = 32;           // lanes of a lane chunk's tree: a warp
  static constexpr int64_t kLaneChunk = 256;  // nonzeros of a lane chunk: 8 loads a lane in flight
  static constexpr int64_t kColumnChunkMin = 256;
  static constexpr int64_t kColumnChunkPerFeature = 16;  // a column chunk gathers ~16 x 4-byte rows of F
};

// Nonzeros per chunk for rows of `features` columns; this number defines the results' last bits.
GPUPRIM_HD int64_t chunk_size(int64_t features) {
  if (features == 1) return RowOrder::kLaneChunk;
  const int64_t by_width = RowOrder::kColumnChunkPerFeature * features;
  return by_width > RowOrder::kColumnChunkMin ? by_width : RowOrder::kColumnChunkMin;
}

}  // namespace merge_path
}  // namespace gpuprim
