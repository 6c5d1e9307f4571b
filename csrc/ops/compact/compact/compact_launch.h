// ATen-free interface between compact_cuda.cpp (glue) and compact_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/workspace.h"

namespace gpuprim {

// out[0:count) = the elements x[i] (element_size bytes each, i in [0, n)) with flags[i], in order;
// out[count:n) = copies of the element_size bytes at fill (host memory), or left unwritten when fill is
// null; *count written on the device. n >= 0; no host sync. `op` (compact, masked_select) names the caller in
// errors.
void compact_cuda_launch(const char* op, const void* x, const bool* flags, int64_t n, int element_size, void* out,
                         int64_t* count, const void* fill, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
