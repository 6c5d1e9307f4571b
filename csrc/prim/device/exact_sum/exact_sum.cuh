// The exact sum of rows or columns (exact_sum.h's arithmetic, the kernels of exact_sum_kernels.cuh): the same
// bits as the CPU kernel for every launch shape. Chunk sizes follow the device (SM count, occupancy) and the
// test knob; the result never does, since partial states merge exactly.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "prim/device/exact_sum/exact_sum_kernels.cuh"
#include "prim/device/exact_sum/tuning_exact_sum.h"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace exact_sum {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The partial states of `items` work items when their rows or columns are split (chunks > 1), else none.
template <int K>
State<K>* partials_for(int64_t items, int64_t chunks, Workspace& workspace) {
  return chunks > 1 ? static_cast<State<K>*>(workspace.allocate(size_t(items) * sizeof(State<K>))) : nullptr;
}

// out[r] = the sum (or mean, if `mean`) of the row x[r, 0:cols] of a contiguous [rows, cols] matrix, rounded
// once to out_type. blocks / threads: the test knob (0 = automatic); the bits never depend on them.
template <typename In>
void sum_rows(const In* x, int64_t rows, int64_t cols, bool mean, DType out_type, void* out, int64_t blocks,
              int64_t threads, Workspace& workspace, cudaStream_t stream) {
  constexpr int K = BinsFor<std::conditional_t<std::is_same_v<In, double>, double, float>>::value;
  constexpr int64_t kItems = Vector<In>::kItems;
  const bool knob = blocks > 0;
  if (threads <= 0) threads = Tuning::kThreads;
  const int64_t warps_per_block = threads / kWarpSize;
  auto kernel = sum_chunks_kernel<In, K>;
  // Occupancy of the default block size is asked once (it costs microseconds: small inputs notice).
  static std::atomic<int> default_per_sm{0};
  int per_sm = threads == Tuning::kThreads ? default_per_sm.load() : 0;
  if (per_sm == 0) {
    GPUPRIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(threads), 0));
    if (threads == Tuning::kThreads) default_per_sm = per_sm;
  }
  const int64_t resident = int64_t(std::max(per_sm, 1)) * current_device_info().sm_count;
  const int64_t target_warps = (knob ? blocks : resident) * warps_per_block;
  // Split rows into chunks only while there are fewer rows than warps to fill the GPU.
  int64_t chunks = 1;
  if (rows < target_warps) {
    const int64_t min_chunk = kWarpSize * kItems * (knob ? 1 : Tuning::kMinVectorsPerLane);
    chunks = std::min(ceil_div(target_warps, rows), ceil_div(cols, min_chunk));
  }
  chunks = std::max<int64_t>({chunks, ceil_div(cols, kMaxChunk), 1});
  int64_t chunk_len = ceil_div(cols, chunks);
  chunk_len = ceil_div(chunk_len, kWarpSize * kItems) * (kWarpSize * kItems);  // whole warp-wide vector steps
  chunks = cols == 0 ? 1 : ceil_div(cols, chunk_len);
  const int64_t items = rows * chunks;
  const int64_t grid = knob ? blocks : std::min(ceil_div(items, warps_per_block), resident);
  State<K>* partials = partials_for<K>(items, chunks, workspace);
  kernel<<<unsigned(grid), unsigned(threads), 0, stream>>>(x, rows, cols, chunk_len, chunks, partials, mean, out_type,
                                                          out);
  GPUPRIM_LAUNCH_CHECK();
  if (chunks > 1) {
    const int64_t combine_grid = std::min(rows, resident);
    sum_combine_kernel<K><<<unsigned(combine_grid), unsigned(threads), 0, stream>>>(partials, rows, chunks, cols, mean,
                                                                                  out_type, out);
    GPUPRIM_LAUNCH_CHECK();
  }
}

// out[o, i] = the sum (or mean) over j of x[o, j, i] of a contiguous [outer, n, inner] tensor, without
// transposing: the same bits as reducing the transposed rows.
template <typename In>
void sum_columns(const In* x, int64_t outer, int64_t n, int64_t inner, bool mean, DType out_type, void* out,
                 int64_t blocks, int64_t threads, Workspace& workspace, cudaStream_t stream) {
  constexpr int K = BinsFor<std::conditional_t<std::is_same_v<In, double>, double, float>>::value;
  const bool knob = blocks > 0;
  if (threads <= 0) threads = Tuning::kThreads;
  auto kernel = sum_columns_kernel<In, K>;
  const int64_t resident = resident_blocks(kernel, int(threads));
  const int64_t target_threads = (knob ? blocks : resident) * threads;
  const int64_t columns = outer * inner;
  // Split n only while columns cannot fill the GPU; at least kColumnMinValues values per thread (4 with the knob,
  // so that small inputs split too).
  int64_t chunks = 1;
  if (columns < target_threads) {
    chunks = std::min(ceil_div(target_threads, columns), ceil_div(n, knob ? 4 : Tuning::kColumnMinValues));
  }
  chunks = std::max<int64_t>({chunks, ceil_div(n, kMaxChunk), 1});
  const int64_t chunk_len = n == 0 ? 0 : ceil_div(n, chunks);
  chunks = n == 0 ? 1 : ceil_div(n, chunk_len);
  const int64_t items = columns * chunks;
  const int64_t grid = knob ? blocks : std::min(ceil_div(items, threads), resident);
  State<K>* partials = partials_for<K>(items, chunks, workspace);
  kernel<<<unsigned(grid), unsigned(threads), 0, stream>>>(x, outer, n, inner, chunk_len, chunks, partials, mean,
                                                          out_type, out);
  GPUPRIM_LAUNCH_CHECK();
  if (chunks > 1) {
    const int64_t combine_grid = std::min(ceil_div(columns, threads), resident);
    sum_columns_combine_kernel<K><<<unsigned(combine_grid), unsigned(threads), 0, stream>>>(
        partials, columns, chunks, n, mean, out_type, out);
    GPUPRIM_LAUNCH_CHECK();
  }
}

}  // namespace exact_sum
}  // namespace gpuprim
