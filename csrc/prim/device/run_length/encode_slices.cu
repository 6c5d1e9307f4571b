// encode_slices (encode_slices.h): the run heads (a slice that differs from the one before it), prim's scan of
// the heads (each slice's run), one pass recording run starts and the inverse, then the runs' lengths and their
// first slices gathered into values. Bytes: rows read about twice (each slice against its predecessor), values
// written once, and m bytes of heads plus 8m of ranks in the workspace.
#include "prim/device/run_length/encode_slices.h"
#include "prim/device/run_length/slice_equal.h"
#include "prim/device/scan/scan.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace run_length {
namespace {

__device__ __forceinline__ int64_t row_of(const int64_t* order, int64_t j) { return order != nullptr ? order[j] : j; }

// heads[0] is preset to 1 and the others to 0. A thread per element of slices 1..m-1 (a wide slice spreads over
// many threads); an element unequal to the one above it marks its slice: every writer stores the same 1.
template <typename Bits>
__global__ void slice_heads_kernel(const Bits* __restrict__ rows, const int64_t* __restrict__ order, int64_t m,
                                   int64_t width, KeyCodec<Bits> codec, uint8_t* __restrict__ heads) {
  const int64_t items = (m - 1) * width;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < items; e += stride) {
    const int64_t j = 1 + e / width;
    const int64_t c = e - (j - 1) * width;
    const Bits here = rows[row_of(order, j) * width + c];
    const Bits above = rows[row_of(order, j - 1) * width + c];
    if (!elements_equal(here, above, codec)) heads[j] = 1;
  }
}

// ranks[j] = 1 + the run of the j-th slice. Starts past capacity are not recorded (never out of bounds);
// starts[capacity] is kept for the length of run capacity - 1.
__global__ void run_starts_kernel(const uint8_t* __restrict__ heads, const int64_t* __restrict__ ranks,
                                  const int64_t* __restrict__ order, int64_t m, int64_t capacity,
                                  int64_t* __restrict__ starts, int64_t* __restrict__ inverse,
                                  int64_t* __restrict__ num_runs) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < m; j += stride) {
    const int64_t r = ranks[j] - 1;
    if (inverse != nullptr) inverse[row_of(order, j)] = r;
    if (heads[j] && r <= capacity) starts[r] = j;
    if (j == m - 1) *num_runs = r + 1;
  }
}

__global__ void run_counts_kernel(const int64_t* __restrict__ starts, const int64_t* __restrict__ num_runs, int64_t m,
                                  int64_t capacity, int64_t* __restrict__ counts) {
  const int64_t num = *num_runs;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < capacity; r += stride) {
    counts[r] = r < num ? (r + 1 < num ? starts[r + 1] : m) - starts[r] : 0;
  }
}

// A thread per element of values: run r's first slice, or the fill past the runs.
template <typename Bits>
__global__ void run_values_kernel(const Bits* __restrict__ rows, const int64_t* __restrict__ order,
                                  const int64_t* __restrict__ starts, const int64_t* __restrict__ num_runs,
                                  int64_t width, int64_t capacity, Bits fill, Bits* __restrict__ values) {
  const int64_t num = *num_runs;
  const int64_t items = capacity * width;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < items; e += stride) {
    const int64_t r = e / width;
    const int64_t c = e - r * width;
    values[e] = r < num ? rows[row_of(order, starts[r]) * width + c] : fill;
  }
}

}  // namespace

template <typename Bits>
void encode_slices(const Bits* rows, const int64_t* order, int64_t m, int64_t width, KeyCodec<Bits> codec,
                   int64_t capacity, Bits fill, Bits* values, int64_t* counts, int64_t* inverse, int64_t* num_runs,
                   Workspace& workspace, cudaStream_t stream) {
  auto* starts = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(capacity + 1)));
  if (m == 0) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(num_runs, 0, sizeof(int64_t), stream));
  } else {
    auto* heads = static_cast<uint8_t*>(workspace.allocate(size_t(m)));
    auto* ranks = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(m)));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(heads, 0, size_t(m), stream));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(heads, 1, 1, stream));  // the first slice opens the first run
    if (m > 1 && width > 0) {
      const int64_t items = (m - 1) * width;
      slice_heads_kernel<Bits>
          <<<grid_for(items, kBlockThreads), kBlockThreads, 0, stream>>>(rows, order, m, width, codec, heads);
      GPUPRIM_LAUNCH_CHECK();
    }
    scan::scan_launch<uint8_t, int64_t, int64_t>(heads, ranks, scan::Shape{1, m, 1}, /*exclusive=*/false,
                                                 /*reverse=*/false, workspace, stream);
    run_starts_kernel<<<grid_for(m, kBlockThreads), kBlockThreads, 0, stream>>>(heads, ranks, order, m, capacity,
                                                                                starts, inverse, num_runs);
    GPUPRIM_LAUNCH_CHECK();
  }
  if (counts != nullptr && capacity > 0) {
    run_counts_kernel<<<grid_for(capacity, kBlockThreads), kBlockThreads, 0, stream>>>(starts, num_runs, m, capacity,
                                                                                       counts);
    GPUPRIM_LAUNCH_CHECK();
  }
  if (capacity > 0 && width > 0) {
    const int64_t items = capacity * width;
    run_values_kernel<Bits><<<grid_for(items, kBlockThreads), kBlockThreads, 0, stream>>>(
        rows, order, starts, num_runs, width, capacity, fill, values);
    GPUPRIM_LAUNCH_CHECK();
  }
}

#define GPUPRIM_INSTANTIATE_ENCODE_SLICES(BITS)                                                                   \
  template void encode_slices<BITS>(const BITS*, const int64_t*, int64_t, int64_t, KeyCodec<BITS>, int64_t, BITS, \
                                    BITS*, int64_t*, int64_t*, int64_t*, Workspace&, cudaStream_t);
GPUPRIM_INSTANTIATE_ENCODE_SLICES(uint8_t)
GPUPRIM_INSTANTIATE_ENCODE_SLICES(uint16_t)
GPUPRIM_INSTANTIATE_ENCODE_SLICES(uint32_t)
GPUPRIM_INSTANTIATE_ENCODE_SLICES(uint64_t)

}  // namespace run_length
}  // namespace gpuprim
