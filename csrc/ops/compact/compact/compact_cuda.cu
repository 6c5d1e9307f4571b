// Kernel of gpuprim::compact: one pass over x and the flags with a decoupled look-back on the kept
// counts (prim/lookback.cuh), or for large inputs two: the kept count of every tile first (the flags
// alone, 1 byte an element), a scan of those counts, then the same tile kernel reading its prefix instead
// of waiting for its predecessors. Elements are handled as same-width unsigned words (compaction copies
// bits, so the dtype only matters through its size). Each tile ranks its elements, learns P (kept
// elements before it), then writes every output position it owns exactly once:
// a kept element with tile-local rank r goes to out[P + r], the dropped element with global drop rank
// q writes the fill word at out[n - 1 - q]. The dropped elements fill [count, n) from the end, so no
// tail pass is needed and nobody has to know the total count first; the last tile writes *count.
// Without a fill (fill_value=None) the dropped elements write nothing: CUB's DeviceSelect bytes.
//
// H200, 256M fp32, half kept (2026-11-30): persistent blocks claiming 4096-element tiles from a counter
// 0.99 ms; one 8192-element tile per block, tile = block index: 0.78 ms; with the look-back's first poll
// delayed 2000 ns: 0.74 ms (no fill: 0.57 ms; CUB's DeviceSelect::If, which reads no mask, 0.59 ms). Launch
// bounds for 5 / 6 blocks per SM (48 / 40 registers, spilling): 0.75 / 0.81 ms; 3000 ns: 0.74 (no fill 0.59).
// Two passes (H200 probe, 2026-11-30 ~20:30 UTC, CUB's If timed in the same program: 601 us): 256M 740 -> 672 us
// (no fill 571 -> 503 us): the flags are read twice, but no tile waits on another; 16M 59 -> 60 us, 1M 10.3 ->
// 15.9 us (three launches more), so one pass below kTwoPassMinBytes of x.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include <algorithm>

#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"
#include "ops/compact/compact/compact_launch.h"
#include "prim/util/cub.cuh"
#include "prim/device/scan/lookback.cuh"

namespace gpuprim {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kSlots = 1;  // group look-back window: kSlots * 32 groups of 32 tiles
constexpr int64_t kTwoPassMinBytes = int64_t(128) << 20;  // x's bytes from which two passes pay (see above)
constexpr int kCountTilesPerBlock = 4;  // count_kernel: tiles a block counts, their flags loaded at once
constexpr unsigned kFirstPollDelayNs = 2000;  // H200 256M fp32: 1000 / 2000 / 3000 ns 0.75 / 0.74 / 0.73 ms,
                                              // bf16 0.54 / 0.52 / 0.58 ms

// A thread holds 4 * kChunks elements of its tile in registers: kChunks chunks of 4 * kThreads elements.
// 8 chunks (8192 elements a tile) for words of up to 4 bytes, 4 for 8-byte words (s_kept stays 32 KB).
template <int kChunks>
struct TileShape {
  static_assert(4 * kChunks <= 32, "a thread's flags are the bits of one 32-bit mask");
  static constexpr int kChunkItems = 4 * kThreads;
  static constexpr int kItems = kChunks * kChunkItems;
  // A warp's kept count per chunk is <= 128, so four chunks' counts share one 32-bit word in the scan.
  static constexpr int kPacks = (kChunks + 3) / 4;
  static constexpr int kTotals = kChunks * kWarps;  // (chunk, warp) kept counts, chunk-major = element order
  static constexpr int kTotalsPerLane = (kTotals + 31) / 32;
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
    compact_kernel(const Word* __restrict__ x, const uint8_t* __restrict__ flags, int64_t n, Word* __restrict__ out,
                   int64_t* __restrict__ count, TileStatus* tiles, TileStatus* groups, Word fill, bool write_fill,
                   const int64_t* __restrict__ tile_offsets) {
  using Shape = TileShape<kChunks>;
  constexpr int kTileItems = Shape::kItems, kChunkItems = Shape::kChunkItems, kPacks = Shape::kPacks;
  constexpr int kTotals = Shape::kTotals, kTotalsPerLane = Shape::kTotalsPerLane;
  __shared__ int s_totals[kTotals];
  __shared__ int s_offsets[kTotals];  // tile-local rank of each (chunk, warp)'s first kept element
  __shared__ int64_t s_prefix;        // kept elements before this tile
  __shared__ int64_t s_window[32 * kSlots];
  __shared__ int s_kept_count;        // kept elements in this tile
  __shared__ Word s_kept[kTileItems];  // this tile's kept words, in order

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
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
  for (int p = 0; p < kPacks; ++p) own[p] = scan[p];
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const uint32_t v = __shfl_up_sync(0xffffffffu, scan[p], offset);
      if (lane >= offset) scan[p] += v;
    }
  }
  if (lane == 31) {
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
    int inclusive = sum;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const int v = __shfl_up_sync(0xffffffffu, inclusive, offset);
      if (lane >= offset) inclusive += v;
    }
    int running = inclusive - sum;
#pragma unroll
    for (int k = 0; k < kTotalsPerLane; ++k) {
      const int index = lane * kTotalsPerLane + k;
      if (index < kTotals) s_offsets[index] = running;
      running += values[k];
    }
    if (lane == 31) s_kept_count = inclusive;
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
                                                                   kFirstPollDelayNs);
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
// elements in compact_kernel). kVector: flags aligned for 16-byte loads. Plain loads: the flags are read again
// right after, from L2 where they fit.
template <int kTileItems, bool kVector>
__global__ void __launch_bounds__(kThreads)
    count_kernel(const uint8_t* __restrict__ flags, int64_t n, int64_t num_tiles, int64_t* __restrict__ counts) {
  constexpr int kLoads = kTileItems / 16 / kThreads;  // 16-byte loads per thread and tile
  static_assert(kLoads * 16 * kThreads == kTileItems, "tile shape");
  __shared__ int s_warp_counts[kCountTilesPerBlock][kWarps];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
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
    for (int offset = 16; offset >= 1; offset /= 2) kept += __shfl_xor_sync(0xffffffffu, kept, offset);
    if (lane == 0) s_warp_counts[t][warp] = kept;
  }
  __syncthreads();
  if (threadIdx.x < kCountTilesPerBlock && first_tile + threadIdx.x < num_tiles) {
    int kept = 0;
    for (int w = 0; w < kWarps; ++w) kept += s_warp_counts[threadIdx.x][w];
    counts[first_tile + threadIdx.x] = kept;
  }
}

template <typename Word, bool kVector>
void launch(const void* x, const bool* flags, int64_t n, void* out, int64_t* count, const void* fill,
            Workspace& workspace, cudaStream_t stream) {
  constexpr int kChunks = sizeof(Word) == 8 ? 4 : 8;
  const int64_t num_tiles = (n + TileShape<kChunks>::kItems - 1) / TileShape<kChunks>::kItems;
  if (num_tiles > kMaxGrid) {  // 2^42 (8-byte words) or 2^43 elements: more than any GPU holds today
    throw std::invalid_argument("gpuprim.compact: x has " + std::to_string(n) + " elements, more than the " +
                                std::to_string(kMaxGrid * TileShape<kChunks>::kItems) + " supported");
  }
  Word fill_word = 0;
  if (fill != nullptr) std::memcpy(&fill_word, fill, sizeof(Word));
  const auto* flag_bytes = reinterpret_cast<const uint8_t*>(flags);
  const auto grid = static_cast<unsigned>(num_tiles);
  if (n * int64_t(sizeof(Word)) < kTwoPassMinBytes) {
    const auto state = lookback::allocate_state<int64_t>(1, num_tiles, workspace, stream);
    compact_kernel<Word, kVector, kChunks><<<grid, kThreads, 0, stream>>>(
        static_cast<const Word*>(x), flag_bytes, n, static_cast<Word*>(out), count, state.tiles, state.groups,
        fill_word, fill != nullptr, nullptr);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  constexpr int kTileItems = TileShape<kChunks>::kItems;
  auto* counts = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * num_tiles));
  auto* offsets = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * num_tiles));
  const auto count_grid = static_cast<unsigned>((num_tiles + kCountTilesPerBlock - 1) / kCountTilesPerBlock);
  if (reinterpret_cast<uintptr_t>(flags) % 16 == 0) {
    count_kernel<kTileItems, true><<<count_grid, kThreads, 0, stream>>>(flag_bytes, n, num_tiles, counts);
  } else {
    count_kernel<kTileItems, false><<<count_grid, kThreads, 0, stream>>>(flag_bytes, n, num_tiles, counts);
  }
  GPUPRIM_LAUNCH_CHECK();
  const auto tiles = static_cast<int32_t>(num_tiles);  // <= kMaxGrid: CUB's 32-bit offsets
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts, offsets, tiles, stream));
  void* temp = workspace.allocate(temp_bytes);
  GPUPRIM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, counts, offsets, tiles, stream));
  compact_kernel<Word, kVector, kChunks><<<grid, kThreads, 0, stream>>>(
      static_cast<const Word*>(x), flag_bytes, n, static_cast<Word*>(out), count, nullptr, nullptr, fill_word,
      fill != nullptr, offsets);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Word>
void compact_words(const void* x, const bool* flags, int64_t n, void* out, int64_t* count, const void* fill,
                   Workspace& workspace, cudaStream_t stream) {
  const size_t vector_align = std::min<size_t>(16, 4 * sizeof(Word));
  const bool aligned = reinterpret_cast<uintptr_t>(x) % vector_align == 0 && reinterpret_cast<uintptr_t>(flags) % 4 == 0;
  if (aligned) return launch<Word, true>(x, flags, n, out, count, fill, workspace, stream);
  return launch<Word, false>(x, flags, n, out, count, fill, workspace, stream);
}

}  // namespace

void compact_cuda_launch(const void* x, const bool* flags, int64_t n, int element_size, void* out, int64_t* count,
                         const void* fill, Workspace& workspace, cudaStream_t stream) {
  if (n == 0) {  // nothing to select: the count is 0
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int64_t), stream));
    return;
  }
  switch (element_size) {
    case 1: return compact_words<uint8_t>(x, flags, n, out, count, fill, workspace, stream);
    case 2: return compact_words<uint16_t>(x, flags, n, out, count, fill, workspace, stream);
    case 4: return compact_words<uint32_t>(x, flags, n, out, count, fill, workspace, stream);
    case 8: return compact_words<uint64_t>(x, flags, n, out, count, fill, workspace, stream);
    default: throw std::invalid_argument("gpuprim.compact: unsupported element size " + std::to_string(element_size));
  }
}

}  // namespace gpuprim
