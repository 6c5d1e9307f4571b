// Top-k of short rows of 8-byte keys (n <= 512, k <= Tuning::kShortMaxK; short_rows.cuh takes 1-, 2- and
// 4-byte keys): one warp per row, the row's keys in registers (item j of lane l: position l + 32 j), k rounds of
// a warp-wide (key, position) argmax; only the winner's lane rescans its items. warp_best_rounds is shared with
// the fused topk_gating kernels, which rank a token's logits (and groups) the same way.
#pragma once
#include <cstdint>
#include <type_traits>

#include "prim/device/topk_rows/tuning_topk_rows.h"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"
#include "prim/util/launch.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace topk_rows {

constexpr uint32_t kNoPosition = 0xFFFFFFFFu;  // an empty candidate: loses to every element
constexpr int kWarpRowsPerBlock = Tuning::kWarpRowsPerBlock;
constexpr int kWarpRowMaxItems = 16;  // rows of up to 512 elements in registers

// This lane's best live item (items j hold row positions lane + 32 j; lower j wins ties).
template <typename Key, int kItems>
__device__ __forceinline__ void lane_best(const Key (&keys)[kItems], uint32_t alive, int lane, Key& best_key,
                                          uint32_t& best_position) {
  best_key = 0;
  best_position = kNoPosition;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if (((alive >> j) & 1u) && (best_position == kNoPosition || keys[j] > best_key)) {
      best_key = keys[j];
      best_position = uint32_t(lane + j * kWarpSize);
    }
  }
}

// k rounds of a warp-wide argmax over the lanes' live items (alive: this lane's; the winner's bit is cleared
// and only the winner's lane rescans). Round r calls taken(r, key, position) on every lane with the r-th best.
template <typename Key, int kItems, typename Taken>
__device__ __forceinline__ void warp_best_rounds(const Key (&keys)[kItems], uint32_t& alive, int lane, int k,
                                                 Taken&& taken) {
  Key best_key;
  uint32_t best_position;
  lane_best(keys, alive, lane, best_key, best_position);
  for (int rank = 0; rank < k; ++rank) {
    Key key = best_key;
    uint32_t position = best_position;
    warp::best(key, position);
    taken(rank, key, position);
    if (int(position % kWarpSize) == lane) {
      alive &= ~(1u << (position / kWarpSize));
      lane_best(keys, alive, lane, best_key, best_position);
    }
  }
}

// A lane's items of a warp's row: item j is position lane + 32 j; load(j, position) for those inside the row
// (< n), returned as a mask (bit j). The caller's arrays hold their empty values for the others.
template <int kItems, typename Load>
__device__ __forceinline__ uint32_t load_lane_items(int n, int lane, Load&& load) {
  uint32_t alive = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int position = lane + j * kWarpSize;
    if (position < n) {
      load(j, position);
      alive |= 1u << j;
    }
  }
  return alive;
}

// Short rows: one warp per row; the row's keys stay in registers; k rounds of a warp argmax write
// the results in final order (the winner's lane writes its element and rescans its own items).
template <typename Bits, int kItems>
__global__ void __launch_bounds__(kWarpSize* kWarpRowsPerBlock)
    warp_topk_kernel(const Bits* __restrict__ x, int64_t rows, int n, int k, KeyCodec<Bits> codec,
                     Bits* __restrict__ values, int64_t* __restrict__ indices) {
  using Key = WideKey<Bits>;
  const int lane = int(threadIdx.x) % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / kWarpSize);
  for (int64_t row = int64_t(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize; row < rows;
       row += warps) {  // uniform across the warp
    const Bits* in = x + row * n;
    Key keys[kItems] = {};
    uint32_t alive = load_lane_items<kItems>(n, lane, [&](int j, int position) {
      keys[j] = Key(codec.encode(in[position]));
    });
    warp_best_rounds(keys, alive, lane, k, [&](int rank, Key, uint32_t position) {
      if (int(position % kWarpSize) == lane) {  // k <= n: always a real element
        values[row * k + rank] = in[position];
        indices[row * k + rank] = int64_t(position);
      }
    });
  }
}

// gpuprim::topk of rows of 8-byte keys with 1 <= k <= n <= 512, k <= Tuning::kShortMaxK (the caller checks).
template <typename Bits>
void topk_warp_rows(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                    int64_t* indices, cudaStream_t stream) {
  const unsigned grid = grid_for(rows, kWarpRowsPerBlock,
                                 int64_t(current_device_info().sm_count) * Tuning::kWarpRowsBlocksPerSm);
  dispatch_pow2<1, kWarpRowMaxItems>((n + kWarpSize - 1) / kWarpSize, [&](auto items) {
    warp_topk_kernel<Bits, decltype(items)::value>
        <<<grid, kWarpSize * kWarpRowsPerBlock, 0, stream>>>(x, rows, int(n), int(k), codec, values, indices);
  });
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace topk_rows
}  // namespace gpuprim
