// ATen-free interface between csr_transpose_cuda.cpp (glue) and csr_transpose_cuda.cu (kernels).
#pragma once
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/input_error.cuh"
#include "prim/util/workspace.h"
#include "prim/util/stream.h"

namespace gpuprim {

// The transpose of the structure of a CSR matrix [rows, cols] with nnz nonzeros: crow_t [cols + 1], col_t
// [nnz] (row ids, `index_type` like crow and col) and perm [nnz] (int64: the nonzero of the input each output
// nonzero is), rows of the transpose in increasing input row order (a stable radix sort of col). Bad col
// entries are recorded and left out (crow_t ends below nnz; col_t and perm past it are unspecified); bad crow
// entries are clamped and recorded.
void csr_transpose_cuda_launch(const void* crow, const void* col, DType index_type, int64_t rows, int64_t cols,
                               int64_t nnz, const InputCheck& crow_check, const InputCheck& col_check, void* crow_t,
                               void* col_t, int64_t* perm, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
