// Kernel of gpuprim::moe_permute: one warp per output row copies its source token's row with the widest word
// (16, 8, 4, 2 or 1 bytes) that the row length and pointers allow, four words in flight per lane.
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/moe/moe_permute/moe_permute_launch.h"
#include "prim/block/rows.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace {

using moe::kWarpsPerBlock;

constexpr int kUnroll = 4;

template <typename Word>
__global__ void __launch_bounds__(kBlockThreads)
    gather_rows_kernel(const Word* __restrict__ hidden, int64_t tokens, int64_t words,
                       const int64_t* __restrict__ token_ids, int64_t rows, InputCheck check,
                       Word* __restrict__ out) {
  const int lane = threadIdx.x % kWarpSize;
  for (int64_t r = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize; r < rows;
       r += int64_t(gridDim.x) * kWarpsPerBlock) {
    const int64_t t = token_ids[r];
    Word* dst = out + r * words;
    if (t < 0 || t >= tokens) {  // padding row (-1), or a bad id: zeros, nothing read
      if (t != -1 && lane == 0) record_input_error(check, r, t);
      for (int64_t c = lane; c < words; c += kWarpSize) dst[c] = Word{};
      continue;
    }
    const Word* src = hidden + t * words;
    int64_t c = lane;
    for (; c + (kUnroll - 1) * kWarpSize < words; c += kUnroll * kWarpSize) {
      Word v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = src[c + u * kWarpSize];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) dst[c + u * kWarpSize] = v[u];
    }
    for (; c < words; c += kWarpSize) dst[c] = src[c];
  }
}

template <typename Word>
void gather(const void* hidden, int64_t tokens, int64_t row_bytes, const int64_t* token_ids, int64_t rows,
            const InputCheck& check, void* out, cudaStream_t stream) {
  gather_rows_kernel<Word><<<moe::warp_grid(rows), kBlockThreads, 0, stream>>>(
      static_cast<const Word*>(hidden), tokens, row_bytes / int64_t(sizeof(Word)), token_ids, rows, check,
      static_cast<Word*>(out));
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void moe_permute_cuda_launch(const void* hidden, int64_t tokens, int64_t row_bytes, const int64_t* token_ids,
                             int64_t rows, const InputCheck& token_ids_check, void* out, cudaStream_t stream) {
  if (rows == 0 || row_bytes == 0) return;
  const uintptr_t alignment = reinterpret_cast<uintptr_t>(hidden) | reinterpret_cast<uintptr_t>(out) |
                              static_cast<uintptr_t>(row_bytes);
  if (alignment % 16 == 0) return gather<uint4>(hidden, tokens, row_bytes, token_ids, rows, token_ids_check, out, stream);
  if (alignment % 8 == 0) return gather<uint2>(hidden, tokens, row_bytes, token_ids, rows, token_ids_check, out, stream);
  if (alignment % 4 == 0) return gather<uint32_t>(hidden, tokens, row_bytes, token_ids, rows, token_ids_check, out, stream);
  if (alignment % 2 == 0) return gather<uint16_t>(hidden, tokens, row_bytes, token_ids, rows, token_ids_check, out, stream);
  gather<uint8_t>(hidden, tokens, row_bytes, token_ids, rows, token_ids_check, out, stream);
}

}  // namespace gpuprim
