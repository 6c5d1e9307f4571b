// ATen-free interface between run_length_encode_cuda.cpp (glue) and run_length_encode_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// Runs of equal (==) consecutive elements of x[0, n): unique[r] = the run's first element,
// counts[r] = its length, *num_runs on the device; unique/counts past num_runs are zero.
// n >= 0 (64-bit); no host sync.
void run_length_encode_cuda_launch(const void* x, DType type, int64_t n, void* unique, int64_t* counts,
                                   int64_t* num_runs, Workspace& workspace, cudaStream_t stream);

// Runs of equal consecutive slices (rows) of rows[m, width] (contiguous: the glue moves dim to the front), equal
// when every element is (==): unique[m, width] gets each run's first slice, counts[m] its length, both zero past
// *num_runs (on the device). 64-bit sizes; no host sync.
void run_length_encode_slices_cuda_launch(const void* rows, DType type, int64_t m, int64_t width, void* unique,
                                          int64_t* counts, int64_t* num_runs, Workspace& workspace,
                                          cudaStream_t stream);

}  // namespace gpuprim
