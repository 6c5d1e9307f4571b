// Host helpers for sizing launches (CUDA runtime only, ATen-free).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"

namespace gpuprim {

constexpr int64_t kMaxGrid = int64_t(1) << 30;  // grid-stride loops cover anything larger

// Blocks for `items` work items, `per_block` a block: at least 1, at most `cap` and kMaxGrid.
inline unsigned grid_for(int64_t items, int64_t per_block, int64_t cap = kMaxGrid) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min({blocks, cap, kMaxGrid})));
}

// Blocks of `kernel` (with `threads` threads, no dynamic shared memory) resident on the whole device.
template <typename Kernel>
int64_t resident_blocks(Kernel kernel, int threads) {
  int per_sm = 0;
  GPUPRIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return int64_t(std::max(per_sm, 1)) * current_device_info().sm_count;
}

// Whether p (null counts as aligned) is a multiple of `bytes`.
inline bool aligned(const void* p, int64_t bytes) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace gpuprim
