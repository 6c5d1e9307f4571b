// ATen-free interface between spmm_cuda.cpp (glue) and spmm_cuda.cu (kernels).
#pragma once
#include <cstdint>

#include "prim/device/segmented_reduce/reducers.h"
#include "prim/util/dtype.h"
#include "prim/util/input_error.cuh"
#include "prim/util/workspace.h"
#include "prim/util/stream.h"

namespace gpuprim {

// A CSR matrix [rows, cols] with nnz nonzeros times a dense [cols, features] matrix.
struct SpmmShape {
  int64_t rows, cols, nnz, features;
};

// out [rows, features] (dtype `type`) = the `reduce` of values[k] * dense[col[k], :] over each row's nonzeros
// k, in the order of prim/device/merge_path/row_order.h, equal bit for bit to the CPU kernel.
// crow [rows + 1] and col [nnz] of `index_type` (int32/int64); values [nnz] of `type` or null (all ones).
// Bad crow entries are clamped, bad col entries skipped; both recorded through their checks.
void spmm_cuda_launch(const void* crow, const void* col, DType index_type, const void* values, const void* dense,
                      DType type, SpmmShape shape, Reduce reduce, const InputCheck& crow_check,
                      const InputCheck& col_check, void* out, Workspace& workspace, cudaStream_t stream);

// grad_values [nnz] = sum over f of grad[row(k), f] * dense[col[k], f] (divided by the row's length for
// mean), each a left-to-right fused multiply-add over f as the CPU kernel. Bad col entries give 0.
void spmm_backward_cuda_launch(const void* grad, const void* crow, const void* col, DType index_type,
                               const void* dense, DType type, SpmmShape shape, Reduce reduce,
                               const InputCheck& col_check, void* grad_values, cudaStream_t stream);

}  // namespace gpuprim
