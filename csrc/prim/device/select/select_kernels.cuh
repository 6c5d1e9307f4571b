// Kernels of the flagged selection (launched by select.cuh): the kept elements of x, in order, with or
// without a fill of the rest. Elements are handled as same-width unsigned words (a selection copies bits).
#pragma once
#include <algorithm>
#include <cstdint>

#include "prim/device/scan/lookback.cuh"
#include "prim/device/select/tuning_select.h"
#include "prim/util/launch.h"
#include "prim/warp/reduce.cuh"
#include "prim/warp/scan.cuh"

namespace gpuprim {
namespace select {

constexpr int kThreads = Tuning::kThreads;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kSlots = Tuning::kLookbackSlots;

// A thread holds 4 * kChunks elements of its tile in registers: kChunks chunks of 4 * kThreads elements.
template <int kChunks>
struct TileShape {
  static_assert(4 * kChunks <= 32, "a thread's flags are the bits of one 32-bit mask");
  static constexpr int kChunkItems = 4 * kThreads;
  static constexpr int kItems = kChunks * kChunkItems;
  // A warp's kept count per chunk is <= 128, so four chunks' counts share one 32-bit word in the scan.
  static constexpr int kPacks = (kChunks + 3) / 4;
  static constexpr int kTotals = kChunks * kWarps;  // (chunk, warp) kept counts, chunk-major = element order
  static constexpr int kTotalsPerLane = (kTotals + kWarpSize - 1) / kWarpSize;
};

using TileStatus = lookback::TileStatus<int64_t>;

// Four consecutive words from p, which is aligned to min(16, 4 * sizeof(Word)) bytes.
template <typename Word>
__device__ __forceinline__ void load4(const Word* p, Word (&w)[4]) {
  if constexpr (sizeof(Word) == 1) {
    const uint32_t v = *reinterpret_cast<const uint32_t*>(p);
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = Word(v >> (8 * j));
  } else if constexpr (sizeof(Word) == 2) {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    w[0] = Word(v.x), w[1] = Word(v.x >> 16), w[2] = Word(v.y), w[3] = Word(v.y >> 16);
  } else if constexpr (sizeof(Word) == 4) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else {
    const uint4 a = reinterpret_cast<const uint4*>(p)[0], b = reinterpret_cast<const uint4*>(p)[1];
    w[0] = a.x | (Word(a.y) << 32), w[1] = a.z | (Word(a.w) << 32);
    w[2] = b.x | (Word(b.y) << 32), w[3] = b.z | (Word(b.w) << 32);
  }
}

// One tile per block, tile = block index (the look-back's order: a tile waits only for tiles of lower
// block index, which the hardware starts first). kVector: x and flags are aligned for the vector loads
// of load4 / 4 flags. write_fill: dropped elements write `fill` at the end of out. tile_offsets (two passes):
// each tile's P, else null (the look-back on tiles / groups).
template <typename Word, bool kVector, int kChunks>
__global__ void __launch_bounds__(kThreads)
    flagged_kernel(const Word* __restrict__ x, const uint8_t* __restrict__ flags, int64_t n, Word* __restrict__ out,
                   int64_t* __restrict__ count, TileStatus* tiles, TileStatus* groups, Word fill, bool write_fill,
                   const int64_t* __restrict__ tile_offsets) {
  using Shape = TileShape<kChunks>;
  constexpr int kTileItems = Shape::kItems, kChunkItems = Shape::kChunkItems, kPacks = Shape::kPacks;
  constexpr int kTotals = Shape::kTotals, kTotalsPerLane = Shape::kTotalsPerLane;
  __shared__ int s_totals[kTotals];
  __shared__ int s_offsets[kTotals];  // tile-local rank of each (chunk, warp)'s first kept element
  __shared__ int64_t s_prefix;        // kept elements before this tile
  __shared__ int64_t s_window[kWarpSize * kSlots];
  __shared__ int s_kept_count;        // kept elements in this tile
  __shared__ Word s_kept[kTileItems];  // this tile's kept words, in order

  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int64_t num_tiles = (n + kTileItems - 1) / kTileItems;
  const int64_t tile = blockIdx.x;
  const int64_t tile_base = tile * kTileItems;
  const int tile_items = int(std::min<int64_t>(kTileItems, n - tile_base));  // < kTileItems in the last tile only
  Word words[kChunks][4];
  uint32_t kept_mask = 0;  // bit 4c + j: element j of this thread's chunk c is kept
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int local = c * kChunkItems + 4 * threadIdx.x;
    const int64_t i = tile_base + local;
    if (kVector && local + 4 <= tile_items) {
      load4(x + i, words[c]);
      const uint32_t f = *reinterpret_cast<const uint32_t*>(flags + i);
#pragma unroll
      for (int j = 0; j < 4; ++j) kept_mask |= uint32_t(((f >> (8 * j)) & 0xffu) != 0) << (4 * c + j);
    } else {  // unaligned input, or the end of the last tile
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool in_range = local + j < tile_items;
        words[c][j] = in_range ? x[i + j] : Word(0);
        kept_mask |= uint32_t(in_range && flags[i + j] != 0) << (4 * c + j);
      }
    }
  }

  // Warp inclusive scan of the per-chunk kept counts (8 bits per chunk, kPacks words).
  uint32_t scan[kPacks] = {};
#pragma unroll
  for (int c = 0; c < kChunks; ++c) scan[c / 4] |= uint32_t(__popc((kept_mask >> (4 * c)) & 0xfu)) << (8 * (c % 4));
  uint32_t own[kPacks];
#pragma unroll
  for (int p = 0; p < kPacks; ++p) {
    own[p] = scan[p];
    scan[p] = warp::inclusive_scan(scan[p]);
  }
  if (lane == kWarpSize - 1) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) s_totals[c * kWarps + warp] = int((scan[c / 4] >> (8 * (c % 4))) & 0xffu);
  }
  __syncthreads();

  if (warp == 0) {  // tile-local rank of each (chunk, warp)'s first kept element, and the tile's kept total
    int values[kTotalsPerLane], sum = 0;
#pragma unroll
    for (int k = 0; k < kTotalsPerLane; ++k) {
      const int index = lane * kTotalsPerLane + k;
      values[k] = index < kTotals ? s_totals[index] : 0;
      sum += values[k];
    }
    const int inclusive = warp::inclusive_scan(sum);
    int running = inclusive - sum;
#pragma unroll
    for (int k = 0; k < kTotalsPerLane; ++k) {
      const int index = lane * kTotalsPerLane + k;
      if (index < kTotals) s_offsets[index] = running;
      running += values[k];
    }
    if (lane == kWarpSize - 1) s_kept_count = inclusive;
  }
  __syncthreads();

  if (tile_offsets != nullptr) {  // two passes: counted and scanned before
    if (threadIdx.x == 0) {
      s_prefix = tile_offsets[tile];
      if (tile == num_tiles - 1) *count = s_prefix + s_kept_count;
    }
  } else if (warp == 0) {  // whole warp: the look-back needs all 32 lanes converged
    const int64_t kept = s_kept_count;
    const int64_t prefix = lookback::tile_exclusive_prefix<kSlots>(tiles, groups, tile, kept, s_window,
                                                                   Tuning::kFirstPollDelayNs);
    if (lane == 0) {
      s_prefix = prefix;
      if (tile == num_tiles - 1) *count = prefix + kept;
    }
  }
  // The kept words, in order, into shared memory (warp 0 after its look-back, the others meanwhile), so
  // that the global writes below are whole lines rather than scattered single words.
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int own_count = int((own[c / 4] >> (8 * (c % 4))) & 0xffu);
    // kept elements of the tile before this thread's 4 elements of chunk c
    int rank = s_offsets[c * kWarps + warp] + int((scan[c / 4] >> (8 * (c % 4))) & 0xffu) - own_count;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if ((kept_mask >> (4 * c + j)) & 1u) s_kept[rank++] = words[c][j];  // kept_mask is 0 past the tile's end
    }
  }
  __syncthreads();

  // Kept words to out[P, P + K); the tile's D dropped elements have drop ranks q0 .. q0 + D - 1
  // (q0 = dropped before the tile) and own the fill words at out[n - q0 - D, n - q0).
  const int kept_count = s_kept_count, dropped_count = tile_items - kept_count;
  Word* const kept_out = out + s_prefix;
  Word* const fill_out = out + (n - (tile_base - s_prefix) - dropped_count);
  for (int r = threadIdx.x; r < kept_count; r += kThreads) kept_out[r] = s_kept[r];
  if (write_fill) {
    for (int r = threadIdx.x; r < dropped_count; r += kThreads) fill_out[r] = fill;
  }
}

// The two-pass path's first pass: counts[tile] = the tile's flags != 0, kTileItems flags a tile (its kTileItems
// elements in flagged_kernel). kVector: flags aligned for 16-byte loads. Plain loads: the flags are read again
// right after, from L2 where they fit.
template <int kTileItems, bool kVector>
__global__ void __launch_bounds__(kThreads)
    count_kernel(const uint8_t* __restrict__ flags, int64_t n, int64_t num_tiles, int64_t* __restrict__ counts) {
  constexpr int kLoads = kTileItems / 16 / kThreads;  // 16-byte loads per thread and tile
  static_assert(kLoads * 16 * kThreads == kTileItems, "tile shape");
  constexpr int kCountTilesPerBlock = Tuning::kCountTilesPerBlock;
  __shared__ int s_warp_counts[kCountTilesPerBlock][kWarps];
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int64_t first_tile = int64_t(blockIdx.x) * kCountTilesPerBlock;
  uint4 loaded[kCountTilesPerBlock][kLoads];
#pragma unroll
  for (int t = 0; t < kCountTilesPerBlock; ++t) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const int64_t at = (first_tile + t) * kTileItems + int64_t(j * kThreads + threadIdx.x) * 16;
      if (kVector && at + 16 <= n) {
        loaded[t][j] = *reinterpret_cast<const uint4*>(flags + at);
      } else {  // unaligned flags, or the end: one byte at a time, 0 past n
        uint32_t w[4] = {0, 0, 0, 0};
        for (int b = 0; b < 16; ++b) {
          if (at + b < n) w[b / 4] |= uint32_t(flags[at + b] != 0) << (8 * (b % 4));
        }
        loaded[t][j] = make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
  }
  // Bytes != 0 in a word: bit 7 of each byte set by ((b & 0x7F) + 0x7F) | b exactly when b != 0.
  const auto nonzero_bytes = [](uint32_t w) { return __popc((((w & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | w) & 0x80808080u); };
#pragma unroll
  for (int t = 0; t < kCountTilesPerBlock; ++t) {
    int kept = 0;
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      const uint4 v = loaded[t][j];
      kept += nonzero_bytes(v.x) + nonzero_bytes(v.y) + nonzero_bytes(v.z) + nonzero_bytes(v.w);
    }
    kept = warp::sum(kept);
    if (lane == 0) s_warp_counts[t][warp] = kept;
  }
  __syncthreads();
  if (threadIdx.x < kCountTilesPerBlock && first_tile + threadIdx.x < num_tiles) {
    int kept = 0;
    for (int w = 0; w < kWarps; ++w) kept += s_warp_counts[threadIdx.x][w];
    counts[first_tile + threadIdx.x] = kept;
  }
}

}  // namespace select
}  // namespace gpuprim
