// ATen-free interface between sum_cuda.cpp (glue) and sum_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// out[r] = sum (or mean, if `mean`) of the row x[r, 0:cols] of a contiguous [rows, cols] matrix,
// rounded once to out_type. Bitwise identical to the CPU kernel for every blocks/threads
// (0 = automatic). rows >= 1; cols may be 0.
void sum_cuda_launch(const void* x, DType in_type, void* out, DType out_type, int64_t rows, int64_t cols, bool mean,
                     int64_t blocks, int64_t threads, Workspace& workspace, cudaStream_t stream);

// out[o, i] = sum (or mean) over j of x[o, j, i] of a contiguous [outer, n, inner] tensor (inner > 1),
// without transposing: same bits as reducing the transposed rows.
void sum_cuda_launch_columns(const void* x, DType in_type, void* out, DType out_type, int64_t outer, int64_t n,
                             int64_t inner, bool mean, int64_t blocks, int64_t threads, Workspace& workspace,
                             cudaStream_t stream);

// out[r] = the int64 (wrapping) sum of the row x[r, 0:cols] of a contiguous [rows, cols] matrix of an
// integer or bool type: exact, so the same on every run. offsets: rows + 1 values r * cols (unused
// when rows == 1). rows >= 1, cols >= 1.
void sum_cuda_launch_integer(const void* x, DType in_type, int64_t* out, int64_t rows, int64_t cols,
                             const int64_t* offsets, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
