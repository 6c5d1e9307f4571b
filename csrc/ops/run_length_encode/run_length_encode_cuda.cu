// Kernels of gpuprim::run_length_encode, two passes with 64-bit sizes and no host sync:
//   1. CUB's DeviceSelect::If over the positions 0..n-1 keeps each run's head (i == 0 or
//      x[i] != x[i-1] under the dtype's ==: NaN != NaN, -0.0 == +0.0), writing the heads and
//      their count (num_runs) to device memory;
//   2. one grid-stride pass writes unique[r] = x[head r] and counts[r] = head r+1 - head r for
//      r < num_runs, and zeros past it.
// Bytes per element: x read about twice (the select's x[i-1] mostly hits L1/L2) + heads + 12 bytes
// of output; CUB's DeviceRunLengthEncode::Encode (a reduce-by-key, int sizes) was 2x slower here.
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.h"
#include "common/device_info.h"
#include "ops/run_length_encode/run_length_encode_launch.h"
#include "prim/cub.cuh"
#include "prim/types.cuh"

namespace gpuprim {
namespace thrust = THRUST_NS_QUALIFIER;  // wrapped in gpuprim_thrust, like CUB (prim/cub.cuh)

namespace {

constexpr int kThreads = 256;

template <typename T>
__device__ __forceinline__ bool same_value(T a, T b) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(a) == __half2float(b);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(a) == __bfloat162float(b);
  } else {
    return a == b;
  }
}

template <typename T>
struct IsRunHead {
  const T* x;
  __device__ __forceinline__ bool operator()(int64_t i) const { return i == 0 || !same_value(x[i], x[i - 1]); }
};

template <int kSize> struct WordOf;
template <> struct WordOf<1> { using type = uint8_t; };
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint64_t; };

// unique[r] = x[heads[r]] (bit copies), counts[r] = run r's length for r < *num_runs; 0 past it.
template <typename Word>
__global__ void runs_kernel(const Word* __restrict__ x, const int64_t* __restrict__ heads,
                            const int64_t* __restrict__ num_runs, int64_t n, Word* __restrict__ unique,
                            int64_t* __restrict__ counts) {
  const int64_t runs = *num_runs;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += stride) {
    if (r < runs) {
      const int64_t head = heads[r];
      const int64_t next = r + 1 < runs ? heads[r + 1] : n;
      unique[r] = x[head];
      counts[r] = next - head;
    } else {
      unique[r] = Word(0);
      counts[r] = 0;
    }
  }
}

template <typename T>
void encode(const T* x, int64_t n, T* unique, int64_t* counts, int64_t* num_runs, Workspace& workspace,
            cudaStream_t stream) {
  auto* heads = static_cast<int64_t*>(workspace.allocate(size_t(n) * sizeof(int64_t)));
  const thrust::counting_iterator<int64_t> positions(0);
  const IsRunHead<T> is_head{x};
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, positions, heads, num_runs, n, is_head, stream));
  void* temp = workspace.allocate(temp_bytes == 0 ? 1 : temp_bytes);
  GPUPRIM_CUDA_CHECK(cub::DeviceSelect::If(temp, temp_bytes, positions, heads, num_runs, n, is_head, stream));
  using Word = typename WordOf<sizeof(T)>::type;
  const DeviceInfo& info = current_device_info();
  const int64_t resident = int64_t(info.sm_count) * std::max(1, info.max_threads_per_sm / kThreads);
  const unsigned grid = static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 2 * resident));
  runs_kernel<Word><<<grid, kThreads, 0, stream>>>(reinterpret_cast<const Word*>(x), heads, num_runs, n,
                                                   reinterpret_cast<Word*>(unique), counts);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void run_length_encode_cuda_launch(const void* x, DType type, int64_t n, void* unique, int64_t* counts,
                                   int64_t* num_runs, Workspace& workspace, cudaStream_t stream) {
  if (n == 0) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(num_runs, 0, sizeof(int64_t), stream));
    return;
  }
  GPUPRIM_DISPATCH_ALL("run_length_encode", type, [&] {
    encode<scalar_t>(static_cast<const scalar_t*>(x), n, static_cast<scalar_t*>(unique), counts, num_runs, workspace,
                     stream);
  });
}

}  // namespace gpuprim
