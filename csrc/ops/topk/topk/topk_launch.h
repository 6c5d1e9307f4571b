// ATen-free interface between topk_cuda.cpp (glue) and topk_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// Rows of k up to this many are put in final order inside the selection kernel; longer results
// come back in selection order (see topk_cuda_launch) and the glue sorts them.
constexpr int64_t kTopkBlockSortMax = 2048;

// Top k of each row of a contiguous [rows, n] tensor x (rows >= 1, 1 <= k <= n): values [rows, k]
// (bit copies of x's elements) and indices (int64 positions in the row). Returns true when the
// results are in final order (best first, ties by lower index); false (only for k >
// kTopkBlockSortMax) when each row holds its top k as: the elements strictly better than the k-th
// in increasing index order, then those equal to it in increasing index order — a stable sort by
// value (descending if largest) then gives the final order.
bool topk_cuda_launch(const void* x, DType type, int64_t rows, int64_t n, int64_t k, bool largest, void* values,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
