// Kernels of gpuprim::run_length_encode: prim's run-length encoder, per element type.
#include "ops/compact/run_length_encode/run_length_encode_launch.h"
#include "prim/device/run_length/run_length.cuh"
#include "prim/util/dispatch.h"

namespace gpuprim {

void run_length_encode_cuda_launch(const void* x, DType type, int64_t n, void* unique, int64_t* counts,
                                   int64_t* num_runs, Workspace& workspace, cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("run_length_encode", type, [&] {
    run_length::encode<scalar_t>(static_cast<const scalar_t*>(x), n, static_cast<scalar_t*>(unique), counts,
                                 num_runs, workspace, stream);
  });
}

}  // namespace gpuprim
