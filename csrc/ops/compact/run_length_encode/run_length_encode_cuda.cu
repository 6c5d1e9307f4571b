// Kernels of gpuprim::run_length_encode: prim's run-length encoder, per element type; the slices form (dim=) is
// prim's encode_slices over the rows as they are (no order), with zero fill.
#include "ops/compact/run_length_encode/run_length_encode_launch.h"
#include "prim/device/run_length/encode_slices.h"
#include "prim/device/run_length/run_length.cuh"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"

namespace gpuprim {

void run_length_encode_cuda_launch(const void* x, DType type, int64_t n, void* unique, int64_t* counts,
                                   int64_t* num_runs, Workspace& workspace, cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("run_length_encode", type, [&] {
    run_length::encode<scalar_t>(static_cast<const scalar_t*>(x), n, static_cast<scalar_t*>(unique), counts,
                                 num_runs, workspace, stream);
  });
}

void run_length_encode_slices_cuda_launch(const void* rows, DType type, int64_t m, int64_t width, void* unique,
                                          int64_t* counts, int64_t* num_runs, Workspace& workspace,
                                          cudaStream_t stream) {
  dispatch<AllTypes>("run_length_encode", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Bits = KeyBits<T>;
    run_length::encode_slices<Bits>(static_cast<const Bits*>(rows), /*order=*/nullptr, m, width, key_codec<T>(false),
                                    /*capacity=*/m, /*fill=*/Bits(0), static_cast<Bits*>(unique), counts,
                                    /*inverse=*/nullptr, num_runs, workspace, stream);
  });
}

}  // namespace gpuprim
