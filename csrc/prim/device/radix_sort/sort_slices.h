// The lexicographic order of the slices of a contiguous [m, width] array (torch.unique(dim=)'s order):
// declared here, instantiated once in sort_slices.cu for Bits in {uint8, uint16, uint32, uint64}.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/key_codec.cuh"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace radix_sort {

// order[j] = the row of rows[m, width] that comes j-th when rows are compared element by element in the codec's
// order (the first unequal column decides; torch's order with key_codec<T>(false): NaN above every number,
// -0.0 == +0.0), rows that compare equal in their index order (stable). LSD: stable radix sorts of the columns'
// keys from the last column to the first, as many columns packed into one 64-bit key as fit (8 bytes a key), so
// ceil(width * sizeof(Bits) / 8) sorts of m (key, int64 row) pairs. Deterministic; no host sync.
template <typename Bits>
void sort_slices(const Bits* rows, KeyCodec<Bits> codec, int64_t m, int64_t width, int64_t* order, Workspace& workspace,
                 cudaStream_t stream);

}  // namespace radix_sort
}  // namespace gpuprim
