// Kernels of gpuprim::compact (and masked_select, through compact_launch.h): prim's flagged selection.
#include "ops/compact/compact/compact_launch.h"
#include "prim/device/select/select.cuh"

namespace gpuprim {

void compact_cuda_launch(const char* op, const void* x, const bool* flags, int64_t n, int element_size, void* out,
                         int64_t* count, const void* fill, Workspace& workspace, cudaStream_t stream) {
  select::flagged(op, x, flags, n, element_size, out, count, fill, workspace, stream);
}

}  // namespace gpuprim
