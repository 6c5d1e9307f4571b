// Run-length encoding of a sequence of slices: the runs of equal consecutive rows of a contiguous [m, width]
// array, optionally read through a permutation. unique(dim=) runs it over the rows in sorted order,
// run_length_encode(dim=) over the rows as they are. Instantiated once in encode_slices.cu for Bits in {uint8,
// uint16, uint32, uint64} (elements are handled as raw bits; the codec says how they compare).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/key_codec.cuh"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace run_length {

// The j-th slice is row order[j] of rows (row j when order is null), j in [0, m). Slices are equal when every
// element is (slice_equal.h: the dtype's ==, NaN != NaN, -0.0 == +0.0); a run is a maximal stretch of equal
// consecutive slices. Writes, with r the run index:
//   values [capacity, width]: run r's first slice (its bits), then `fill` in every element past the runs;
//   counts [capacity] (may be null): run r's length, then 0;
//   inverse [m] (may be null): inverse[order[j]] (inverse[j] without order) = the run of the j-th slice;
//   *num_runs (device): the true number of runs, which may exceed capacity (those runs are dropped).
// m, width, capacity >= 0, 64-bit. Exact and deterministic (integer work only); no host sync.
template <typename Bits>
void encode_slices(const Bits* rows, const int64_t* order, int64_t m, int64_t width, KeyCodec<Bits> codec,
                   int64_t capacity, Bits fill, Bits* values, int64_t* counts, int64_t* inverse, int64_t* num_runs,
                   Workspace& workspace, cudaStream_t stream);

}  // namespace run_length
}  // namespace gpuprim
