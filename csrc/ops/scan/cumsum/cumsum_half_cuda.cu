// Explicit instantiations of cumsum for __half, __nv_bfloat16 (see cumsum_typed.cuh).
#include "ops/scan/cumsum/cumsum_typed.cuh"

namespace gpuprim {
GPUPRIM_CUMSUM_INSTANTIATE(__half);
GPUPRIM_CUMSUM_INSTANTIATE(__nv_bfloat16);
}  // namespace gpuprim
