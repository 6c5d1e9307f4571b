// The flagged selection (compaction): out[0:count) = the elements x[i] with flags[i], in order, and
// optionally a fill of out[count:n), with the count on the device (no host sync).
//
// One pass over x and the flags with a decoupled look-back on the kept counts (lookback.cuh), or for large
// inputs two: the kept count of every tile first (the flags alone, 1 byte an element), a scan of those counts,
// then the same tile kernel reading its prefix instead of waiting for its predecessors. Each tile ranks its
// elements, learns P (kept elements before it), then writes every output position it owns exactly once: a
// kept element with tile-local rank r goes to out[P + r], the dropped element with global drop rank q writes
// the fill word at out[n - 1 - q]. The dropped elements fill [count, n) from the end, so no tail pass is
// needed and nobody has to know the total count first; the last tile writes *count. Without a fill the
// dropped elements write nothing: CUB's DeviceSelect bytes.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "prim/device/scan/lookback.cuh"
#include "prim/device/select/select_kernels.cuh"
#include "prim/device/select/tuning_select.h"
#include "prim/util/cub.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace select {

template <typename Word, bool kVector>
void launch_flagged(const char* op, const void* x, const uint8_t* flags, int64_t n, void* out, int64_t* count,
                   const void* fill, Workspace& workspace, cudaStream_t stream) {
  constexpr int kChunks = sizeof(Word) == 8 ? Tuning::kWideChunks : Tuning::kChunks;
  constexpr int kTileItems = TileShape<kChunks>::kItems;
  const int64_t num_tiles = (n + kTileItems - 1) / kTileItems;
  if (num_tiles > kMaxGrid) {  // 2^42 (8-byte words) or 2^43 elements: more than any GPU holds today
    throw std::invalid_argument(std::string("gpuprim.") + op + ": x has " + std::to_string(n) +
                                " elements, more than the " + std::to_string(kMaxGrid * kTileItems) + " supported");
  }
  Word fill_word = 0;
  if (fill != nullptr) std::memcpy(&fill_word, fill, sizeof(Word));
  const auto grid = static_cast<unsigned>(num_tiles);
  if (n * int64_t(sizeof(Word)) < Tuning::kTwoPassMinBytes) {
    const auto state = lookback::allocate_state<int64_t>(1, num_tiles, workspace, stream);
    flagged_kernel<Word, kVector, kChunks><<<grid, kThreads, 0, stream>>>(
        static_cast<const Word*>(x), flags, n, static_cast<Word*>(out), count, state.tiles, state.groups, fill_word,
        fill != nullptr, nullptr);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  auto* counts = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * num_tiles));
  auto* offsets = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * num_tiles));
  const auto count_grid =
      static_cast<unsigned>((num_tiles + Tuning::kCountTilesPerBlock - 1) / Tuning::kCountTilesPerBlock);
  if (aligned(flags, 16)) {
    count_kernel<kTileItems, true><<<count_grid, kThreads, 0, stream>>>(flags, n, num_tiles, counts);
  } else {
    count_kernel<kTileItems, false><<<count_grid, kThreads, 0, stream>>>(flags, n, num_tiles, counts);
  }
  GPUPRIM_LAUNCH_CHECK();
  const auto tiles = static_cast<int32_t>(num_tiles);  // <= kMaxGrid: CUB's 32-bit offsets
  cub_call(workspace, [&](void* temp, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, counts, offsets, tiles, stream);
  });
  flagged_kernel<Word, kVector, kChunks><<<grid, kThreads, 0, stream>>>(
      static_cast<const Word*>(x), flags, n, static_cast<Word*>(out), count, nullptr, nullptr, fill_word,
      fill != nullptr, offsets);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Word>
void flagged_words(const char* op, const void* x, const uint8_t* flags, int64_t n, void* out, int64_t* count,
                   const void* fill, Workspace& workspace, cudaStream_t stream) {
  // The vector loads: x by min(16, 4 * sizeof(Word)) bytes, the flags by 4.
  if (aligned(x, std::min<int64_t>(16, 4 * sizeof(Word))) && aligned(flags, 4)) {
    return launch_flagged<Word, true>(op, x, flags, n, out, count, fill, workspace, stream);
  }
  return launch_flagged<Word, false>(op, x, flags, n, out, count, fill, workspace, stream);
}

// out[0:count) = the elements x[i] (element_size bytes each, i in [0, n)) with flags[i], in order;
// out[count:n) = copies of the element_size bytes at fill (host memory), or left unwritten when fill is
// null; *count written on the device. n >= 0; no host sync. `op` names the caller in errors.
inline void flagged(const char* op, const void* x, const bool* flags, int64_t n, int element_size, void* out,
                    int64_t* count, const void* fill, Workspace& workspace, cudaStream_t stream) {
  if (n == 0) {  // nothing to select: the count is 0
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int64_t), stream));
    return;
  }
  const auto* flag_bytes = reinterpret_cast<const uint8_t*>(flags);
  switch (element_size) {
    case 1: return flagged_words<uint8_t>(op, x, flag_bytes, n, out, count, fill, workspace, stream);
    case 2: return flagged_words<uint16_t>(op, x, flag_bytes, n, out, count, fill, workspace, stream);
    case 4: return flagged_words<uint32_t>(op, x, flag_bytes, n, out, count, fill, workspace, stream);
    case 8: return flagged_words<uint64_t>(op, x, flag_bytes, n, out, count, fill, workspace, stream);
    default:
      throw std::invalid_argument(std::string("gpuprim.") + op + ": unsupported element size " +
                                  std::to_string(element_size));
  }
}

}  // namespace select
}  // namespace gpuprim
