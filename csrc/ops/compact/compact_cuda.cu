// Kernels of gpuprim::compact: CUB's DeviceSelect::Flagged (decoupled look-back, one pass, 64-bit
// num_items in CCCL 3.0) on the elements as same-width unsigned words (compaction copies bits, so
// the dtype only matters through its size). The output is zeroed first with cudaMemsetAsync so its
// tail past the device-side count is zero; the count goes straight to device memory (no sync).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda_check.h"
#include "ops/compact/compact_launch.h"
#include "prim/cub.cuh"

namespace gpuprim {
namespace {

template <typename Word>
void select_flagged(const void* x, const bool* flags, int64_t n, void* out, int64_t* count, Workspace& workspace,
                    cudaStream_t stream) {
  const Word* in = static_cast<const Word*>(x);
  Word* dst = static_cast<Word*>(out);
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, in, flags, dst, count, n, stream));
  void* temp = workspace.allocate(temp_bytes == 0 ? 1 : temp_bytes);
  GPUPRIM_CUDA_CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, in, flags, dst, count, n, stream));
}

}  // namespace

void compact_cuda_launch(const void* x, const bool* flags, int64_t n, int element_size, void* out, int64_t* count,
                         Workspace& workspace, cudaStream_t stream) {
  if (n == 0) {  // nothing to select: the count is 0
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int64_t), stream));
    return;
  }
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(out, 0, size_t(n) * size_t(element_size), stream));
  switch (element_size) {
    case 1: return select_flagged<uint8_t>(x, flags, n, out, count, workspace, stream);
    case 2: return select_flagged<uint16_t>(x, flags, n, out, count, workspace, stream);
    case 4: return select_flagged<uint32_t>(x, flags, n, out, count, workspace, stream);
    case 8: return select_flagged<uint64_t>(x, flags, n, out, count, workspace, stream);
    default: throw std::invalid_argument("gpuprim.compact: unsupported element size " + std::to_string(element_size));
  }
}

}  // namespace gpuprim
