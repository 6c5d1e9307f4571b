// Explicit instantiations of cumsum for bool, uint8_t, int8_t (see cumsum_typed.cuh).
#include "ops/scan/cumsum/cumsum_typed.cuh"

namespace gpuprim {
GPUPRIM_CUMSUM_INSTANTIATE(bool);
GPUPRIM_CUMSUM_INSTANTIATE(uint8_t);
GPUPRIM_CUMSUM_INSTANTIATE(int8_t);
}  // namespace gpuprim
