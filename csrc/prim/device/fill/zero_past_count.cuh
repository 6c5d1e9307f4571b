// Zeroes rows [*count, capacity) of a buffer of `capacity` rows, the count on the device: the slots a
// device-side count left unwritten, with no host sync and no fill of the whole buffer before the kernels that
// write the first rows.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace fill {

template <typename Word>
__global__ void zero_past_count_kernel(Word* __restrict__ out, int64_t words_per_row, const int64_t* __restrict__ count,
                                       int64_t capacity) {
  const int64_t rows = *count;
  const int64_t first = rows < 0 ? 0 : (rows > capacity ? capacity : rows);
  const int64_t end = capacity * words_per_row;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = first * words_per_row + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < end; i += stride) {
    out[i] = Word{};
  }
}

template <typename Word>
void launch_zero_past_count(void* out, int64_t row_bytes, const int64_t* count, int64_t capacity, cudaStream_t stream) {
  const int64_t words_per_row = row_bytes / int64_t(sizeof(Word));
  auto kernel = zero_past_count_kernel<Word>;
  // Sized for the whole buffer, capped at two waves: the tail is unknown on the host and may be all of it.
  const unsigned grid = grid_for(capacity * words_per_row, kBlockThreads, 2 * resident_blocks(kernel, kBlockThreads));
  kernel<<<grid, kBlockThreads, 0, stream>>>(static_cast<Word*>(out), words_per_row, count, capacity);
  GPUPRIM_LAUNCH_CHECK();
}

// out: capacity rows of row_bytes each; count: the rows already written, on the device.
inline void zero_rows_past_count(void* out, int64_t row_bytes, const int64_t* count, int64_t capacity,
                                 cudaStream_t stream) {
  if (capacity == 0 || row_bytes == 0) return;
  if (row_bytes % 16 == 0 && aligned(out, 16))
    return launch_zero_past_count<uint4>(out, row_bytes, count, capacity, stream);
  if (row_bytes % 4 == 0 && aligned(out, 4))
    return launch_zero_past_count<uint32_t>(out, row_bytes, count, capacity, stream);
  launch_zero_past_count<uint8_t>(out, row_bytes, count, capacity, stream);
}

}  // namespace fill
}  // namespace gpuprim
