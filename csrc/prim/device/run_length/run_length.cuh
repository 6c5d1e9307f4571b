// Run-length encoding of x[0, n): unique[r] = the first element of run r, counts[r] = its length, *num_runs
// on the device; unique and counts past num_runs are zero. 64-bit sizes, no host sync.
//
// Two passes over x in tiles of kThreads * kItems elements:
//   0. unique and counts zeroed whole (cudaMemsetAsync), so that past num_runs they are zero (cheaper than
//      the tiles writing the tail's zeros, or a kernel zeroing [num_runs, n) after them);
//   1. count_kernel: per tile, its heads and its last head's position (-1: none);
//   2. CUB's exclusive scan of those pairs (sum of heads, max of positions): per tile, the runs before it
//      and the head of the run it starts in;
//   3. write_kernel: per tile again; the head at i opening run r writes unique[r] = x[i] and the previous
//      run's length counts[r-1] = i - its head; the last tile writes the last run's length and num_runs.
// Bytes: x read twice, unique and counts written whole once and their first num_runs entries again, nothing
// else of size n.
#pragma once
#include <cstdint>

#include "prim/device/run_length/run_length_kernels.cuh"
#include "prim/util/cub.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace run_length {

template <int kSize> struct WordOf;
template <> struct WordOf<1> { using type = uint8_t; };
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint64_t; };

// Runs of equal (==) consecutive elements of x[0, n), n >= 0 (see above).
template <typename T>
void encode(const T* x, int64_t n, T* unique, int64_t* counts, int64_t* num_runs, Workspace& workspace,
            cudaStream_t stream) {
  if (n == 0) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(num_runs, 0, sizeof(int64_t), stream));
    return;
  }
  using Word = typename WordOf<sizeof(T)>::type;
  const auto* words = reinterpret_cast<const Word*>(x);
  const int64_t tiles = (n + kTile - 1) / kTile;
  const bool vector = aligned(x, 16);
  auto* tile_runs = static_cast<RunsPrefix*>(workspace.allocate(sizeof(RunsPrefix) * tiles));
  auto* tile_before = static_cast<RunsPrefix*>(workspace.allocate(sizeof(RunsPrefix) * tiles));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(unique, 0, size_t(n) * sizeof(T), stream));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(counts, 0, size_t(n) * sizeof(int64_t), stream));
  count_kernel<T, Word><<<unsigned(tiles), kThreads, 0, stream>>>(words, n, vector, tile_runs);
  GPUPRIM_LAUNCH_CHECK();
  cub_call(workspace, [&](void* temp, size_t& bytes) {
    return cub::DeviceScan::ExclusiveScan(temp, bytes, tile_runs, tile_before, RunsPrefixOp(), RunsPrefix{0, -1},
                                          tiles, stream);
  });
  write_kernel<T, Word><<<unsigned(tiles), kThreads, 0, stream>>>(words, n, vector, tile_before,
                                                                  reinterpret_cast<Word*>(unique), counts, num_runs);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace run_length
}  // namespace gpuprim
