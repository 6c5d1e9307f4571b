// Kernels of gpuprim::compact: CUB's DeviceSelect::Flagged (decoupled look-back, one pass, 64-bit
// num_items in CCCL 3.0) on the elements as same-width unsigned words (compaction copies bits, so
// the dtype only matters through its size). The count goes straight to device memory, and a
// grid-stride kernel then zeros out[count, n) reading count on the device (no host sync; it writes
// only the tail, not the whole output as a memset before the select would).
#include <cstdint>
#include <stdexcept>
#include <string>

#include <algorithm>

#include "common/cuda_check.h"
#include "common/device_info.h"
#include "ops/compact/compact_launch.h"
#include "prim/cub.cuh"

namespace gpuprim {
namespace {

constexpr int kThreads = 256;

// out[i] = 0 for i in [*count, n).
template <typename Word>
__global__ void zero_tail_kernel(Word* __restrict__ out, const int64_t* __restrict__ count, int64_t n) {
  const int64_t begin = *count;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = begin + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = Word(0);
}

template <typename Word>
void select_flagged(const void* x, const bool* flags, int64_t n, void* out, int64_t* count, Workspace& workspace,
                    cudaStream_t stream) {
  const Word* in = static_cast<const Word*>(x);
  Word* dst = static_cast<Word*>(out);
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, in, flags, dst, count, n, stream));
  void* temp = workspace.allocate(temp_bytes == 0 ? 1 : temp_bytes);
  GPUPRIM_CUDA_CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, in, flags, dst, count, n, stream));
  const DeviceInfo& info = current_device_info();
  const int64_t resident = int64_t(info.sm_count) * std::max(1, info.max_threads_per_sm / kThreads);
  const unsigned grid = static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 2 * resident));
  zero_tail_kernel<Word><<<grid, kThreads, 0, stream>>>(dst, count, n);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void compact_cuda_launch(const void* x, const bool* flags, int64_t n, int element_size, void* out, int64_t* count,
                         Workspace& workspace, cudaStream_t stream) {
  if (n == 0) {  // nothing to select: the count is 0
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int64_t), stream));
    return;
  }
  switch (element_size) {
    case 1: return select_flagged<uint8_t>(x, flags, n, out, count, workspace, stream);
    case 2: return select_flagged<uint16_t>(x, flags, n, out, count, workspace, stream);
    case 4: return select_flagged<uint32_t>(x, flags, n, out, count, workspace, stream);
    case 8: return select_flagged<uint64_t>(x, flags, n, out, count, workspace, stream);
    default: throw std::invalid_argument("gpuprim.compact: unsupported element size " + std::to_string(element_size));
  }
}

}  // namespace gpuprim
