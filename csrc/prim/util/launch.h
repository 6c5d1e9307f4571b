// Launch geometry shared by every kernel and launcher (CUDA runtime only, ATen-free): warp constants, the
// default block size, grid sizing, key widths, alignment.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"

namespace gpuprim {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
// The block size of most kernels: 8 warps, enough for latency hiding with room for 8 blocks per SM.
constexpr int kBlockThreads = 256;

constexpr int64_t kMaxGrid = int64_t(1) << 30;  // grid-stride loops cover anything larger

// Blocks for `items` work items, `per_block` a block: at least 1, at most `cap` and kMaxGrid.
inline unsigned grid_for(int64_t items, int64_t per_block, int64_t cap = kMaxGrid) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min({blocks, cap, kMaxGrid})));
}

// Blocks of `kernel` (with `threads` threads and `shared_bytes` of dynamic shared memory) resident on the
// whole device.
template <typename Kernel>
int64_t resident_blocks(Kernel kernel, int threads, size_t shared_bytes = 0) {
  int per_sm = 0;
  GPUPRIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  return int64_t(std::max(per_sm, 1)) * current_device_info().sm_count;
}

// The bits needed to write every value in [0, max_value] (at least 1): a radix sort's end_bit.
__host__ __device__ inline int bits_to_hold(uint64_t max_value) {
  int bits = 1;
  while (bits < 64 && (max_value >> bits) != 0) ++bits;
  return bits;
}

// Whether p (null counts as aligned) is a multiple of `bytes`.
inline bool aligned(const void* p, int64_t bytes) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace gpuprim
