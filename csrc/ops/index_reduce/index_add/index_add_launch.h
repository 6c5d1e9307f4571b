// ATen-free interface between the CUDA glue of index_add / scatter_reduce (*_cuda.cpp) and the kernels in
// index_add_cuda.cu (prim/device/segmented_reduce/reduce_by_key.cuh). scatter_reduce's glue calls it too, so
// the two op folders are built together (GPUPRIM_OPS=index_add,scatter_reduce).
#pragma once
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"
#include "prim/device/segmented_reduce/reducers.h"
#include "prim/util/input_error.cuh"
#include "prim/util/stream.h"

namespace gpuprim {

// src is a contiguous [outer, items, inner] tensor, out a contiguous [outer, rows, inner] one that holds
// `self` on entry. Item i of every outer slice goes to row index[i] (index: int32/int64 [items]); items
// whose index is outside [0, rows) are skipped (never read or written out of bounds) and recorded through
// `check` (with the value from user_index when not null: scatter's destinations are not the user's index).
struct IndexReduceShape {
  int64_t outer, items, rows, inner;
};

// out[o, r, :] = finalize(reduce, include_self, out[o, r, :], reduce of src[o, i, :] over {i : index[i] == r},
// count, alpha) for every row r that receives at least one item (prim/device/segmented_reduce/reducers.h);
// the other rows keep their value. alpha scales kSum (alpha_int for integer dtypes, alpha_float otherwise).
// deterministic: sort + segmented reduce, bitwise identical run to run; otherwise kSum on fp32/fp64/int32/int64
// uses atomics (fast, order-dependent for floats); every other case always takes the deterministic path.
void index_reduce_cuda_launch(const void* index, DType index_type, const void* src, DType type,
                              IndexReduceShape shape, Reduce reduce, bool include_self, double alpha_float,
                              int64_t alpha_int, bool deterministic, const InputCheck& check,
                              const int64_t* user_index, void* out, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
