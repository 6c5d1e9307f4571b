// ATen-free interface between histogram_cuda.cpp (glue) and histogram_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// counts: [bins] int64 when weights == nullptr, else sums in count_type (kFloat32 or kFloat64), with
// weights already in count_type. overflow: [1] int64. Both are overwritten. scale = bins / (hi - lo).
void histogram_cuda_launch(const void* x, DType x_type, int64_t n, int64_t bins, double lo, double hi, double scale,
                           const void* weights, DType count_type, void* counts, int64_t* overflow, bool deterministic,
                           Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
