// ATen-free interface between topk_cuda.cpp (glue) and topk_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// Top k of each row of a contiguous [rows, n] tensor x (rows >= 1, 1 <= k <= n): values [rows, k]
// (bit copies of x's elements) and indices (int64 positions in the row), in final order: best first
// (largest or smallest in torch's order), ties by lower index.
void topk_cuda_launch(const void* x, DType type, int64_t rows, int64_t n, int64_t k, bool largest, void* values,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
