// Kernels of gpuprim::run_length_encode: CUB's DeviceRunLengthEncode::Encode (a reduce-by-key of
// ones, single pass) in x's own element type, so runs split under the type's == (NaN != NaN,
// -0.0 == +0.0) and each run's unique value is its first element. A grid-stride kernel then zeros
// unique and counts past num_runs, reading num_runs on the device: no host sync.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "common/cuda_check.h"
#include "common/device_info.h"
#include "ops/run_length_encode/run_length_encode_launch.h"
#include "prim/cub.cuh"
#include "prim/types.cuh"

namespace gpuprim {
namespace {

constexpr int kThreads = 256;

// unique[i] = 0 (all bits) and counts[i] = 0 for i in [*num_runs, n).
template <typename Word>
__global__ void zero_tails_kernel(Word* __restrict__ unique, int64_t* __restrict__ counts,
                                  const int64_t* __restrict__ num_runs, int64_t n) {
  const int64_t begin = *num_runs;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = begin + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    unique[i] = Word(0);
    counts[i] = 0;
  }
}

template <int kSize> struct WordOf;
template <> struct WordOf<1> { using type = uint8_t; };
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint64_t; };

template <typename T>
void encode(const T* x, int n, T* unique, int64_t* counts, int64_t* num_runs, Workspace& workspace,
            cudaStream_t stream) {
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, temp_bytes, x, unique, counts, num_runs, n, stream));
  void* temp = workspace.allocate(temp_bytes == 0 ? 1 : temp_bytes);
  GPUPRIM_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, x, unique, counts, num_runs, n, stream));
  using Word = typename WordOf<sizeof(T)>::type;
  const DeviceInfo& info = current_device_info();
  const int64_t resident = int64_t(info.sm_count) * std::max(1, info.max_threads_per_sm / kThreads);
  const unsigned grid =
      static_cast<unsigned>(std::clamp<int64_t>((int64_t(n) + kThreads - 1) / kThreads, 1, 2 * resident));
  zero_tails_kernel<Word><<<grid, kThreads, 0, stream>>>(reinterpret_cast<Word*>(unique), counts, num_runs, n);
  GPUPRIM_LAUNCH_CHECK();
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
    encode<scalar_t>(static_cast<const scalar_t*>(x), static_cast<int>(n), static_cast<scalar_t*>(unique), counts,
                     num_runs, workspace, stream);
  });
}

}  // namespace gpuprim
