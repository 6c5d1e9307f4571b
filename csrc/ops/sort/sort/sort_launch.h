// ATen-free interface between sort_cuda.cpp (glue) and sort_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// Stable sort of each row of a contiguous [rows, n] tensor x (n >= 1, rows >= 1): values gets
// the sorted elements (x's dtype, bit-exact copies), indices their int64 positions within the row.
void sort_cuda_launch(const void* x, DType type, int64_t rows, int64_t n, bool descending, void* values,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
