// Explicit instantiations of cumsum for float, double (see cumsum_typed.cuh).
#include "ops/scan/cumsum/cumsum_typed.cuh"

namespace gpuprim {
GPUPRIM_CUMSUM_INSTANTIATE(float);
GPUPRIM_CUMSUM_INSTANTIATE(double);
}  // namespace gpuprim
