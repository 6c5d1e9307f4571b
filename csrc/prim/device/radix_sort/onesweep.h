// The row sort's path for one row of 32-bit keys (onesweep.cu), called by sort_rows.cu.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/workspace.h"
#include "prim/device/radix_sort/radix_sort.cuh"

namespace gpuprim {

// Stable sort of one row of n (1 <= n <= INT32_MAX) int32 (kind kSigned) or fp32 (kFloat) elements in torch.sort's
// order: values gets the sorted elements (bit copies; NaNs last ascending, first descending), indices their
// positions. x must not overlap the outputs.
void sort_row_onesweep(const uint32_t* x, KeyKind kind, bool descending, int64_t n, uint32_t* values,
                       int64_t* indices, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
