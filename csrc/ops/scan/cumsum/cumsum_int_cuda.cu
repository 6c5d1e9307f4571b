// Explicit instantiations of cumsum for int16_t, int32_t, int64_t (see cumsum_typed.cuh).
#include "ops/scan/cumsum/cumsum_typed.cuh"

namespace gpuprim {
GPUPRIM_CUMSUM_INSTANTIATE(int16_t);
GPUPRIM_CUMSUM_INSTANTIATE(int32_t);
GPUPRIM_CUMSUM_INSTANTIATE(int64_t);
}  // namespace gpuprim
