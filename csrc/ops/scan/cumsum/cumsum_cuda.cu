#include "ops/scan/cumsum/cumsum_launch.h"
#include "ops/scan/cumsum/cumsum_typed.cuh"

namespace gpuprim {

void cumsum_cuda_launch(const void* in, DType in_type, void* out, int64_t outer, int64_t n, int64_t inner,
                        bool exclusive, bool reverse, scan::Algorithm algorithm, Workspace& workspace,
                        cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("cumsum", in_type, [&] {
    cumsum_typed<scalar_t>(static_cast<const scalar_t*>(in), out, scan::Shape{outer, n, inner}, exclusive, reverse,
                           algorithm, workspace, stream);
  });
}

}  // namespace gpuprim
