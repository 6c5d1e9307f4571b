// Kernels of gpuprim::run_length_encode: CUB's DeviceRunLengthEncode::Encode (a reduce-by-key of
// ones, single pass) in x's own element type, so runs split under the type's == (NaN != NaN,
// -0.0 == +0.0) and each run's unique value is its first element. unique and counts are zeroed
// first (cudaMemsetAsync) so their tails past the device-side num_runs are zero; no host sync.
#include <cstdint>
#include <stdexcept>

#include "common/cuda_check.h"
#include "ops/run_length_encode/run_length_encode_launch.h"
#include "prim/cub.cuh"
#include "prim/types.cuh"

namespace gpuprim {
namespace {

template <typename T>
void encode(const T* x, int n, T* unique, int64_t* counts, int64_t* num_runs, Workspace& workspace,
            cudaStream_t stream) {
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, temp_bytes, x, unique, counts, num_runs, n, stream));
  void* temp = workspace.allocate(temp_bytes == 0 ? 1 : temp_bytes);
  GPUPRIM_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, x, unique, counts, num_runs, n, stream));
}

}  // namespace

void run_length_encode_cuda_launch(const void* x, DType type, int64_t n, void* unique, int64_t* counts,
                                   int64_t* num_runs, Workspace& workspace, cudaStream_t stream) {
  if (n < 0 || n > kRunLengthEncodeMaxItems) {
    throw std::invalid_argument("gpuprim.run_length_encode: x must have at most 2^31 - 1 elements on CUDA");
  }
  if (n == 0) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(num_runs, 0, sizeof(int64_t), stream));
    return;
  }
  GPUPRIM_DISPATCH_ALL("run_length_encode", type, [&] {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(unique, 0, size_t(n) * sizeof(scalar_t), stream));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(counts, 0, size_t(n) * sizeof(int64_t), stream));
    encode<scalar_t>(static_cast<const scalar_t*>(x), static_cast<int>(n), static_cast<scalar_t*>(unique), counts,
                     num_runs, workspace, stream);
  });
}

}  // namespace gpuprim
