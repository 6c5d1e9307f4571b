// ATen-free interface between cumsum_cuda.cpp (glue) and cumsum_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/device/scan/scan.h"
#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// Scans `in` along n of a contiguous [outer, n, inner] layout into `out` (same layout).
// out holds in_type for floats and int64 for integers and bool (torch.cumsum's promotion). `algorithm`
// picks how long rows are scanned (prim/device/scan/scan.h).
void cumsum_cuda_launch(const void* in, DType in_type, void* out, int64_t outer, int64_t n, int64_t inner,
                        bool exclusive, bool reverse, scan::Algorithm algorithm, Workspace& workspace,
                        cudaStream_t stream);

}  // namespace gpuprim
