// ATen-free interface between sort_values_cuda.cpp (glue) and sort_values_cuda.cu (the CUB call).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// values = the n elements of x (int32 or int64, 2 <= n <= INT32_MAX) sorted, largest first if descending.
void sort_values_cuda_launch(const void* x, DType type, int64_t n, bool descending, void* values,
                             Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
