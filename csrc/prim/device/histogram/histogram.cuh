// Histogram launchers: counts (int64) or weighted sums (float32 / float64) of values binned by a Binner
// (histogram_kernels.cuh), the dropped values counted in *overflow.
//
//   count_kernel            integer counts: per-block privatized shared-memory counters (one copy per
//                           warp when they fit), run-length merging of equal neighbours and a whole-warp
//                           shortcut, so an all-equal input costs no more than a uniform one.
//   weighted_atomic_kernel  float sums, fastest: shared-memory atomics, then global atomics.
//   weighted_ordered_kernel float sums, deterministic: each warp adds its items into its own histogram in
//                           item order (peers of one bin combined in lane order), warps and blocks combined
//                           in a fixed order. The grid depends only on num_bins, so the bits are the same
//                           on every run and every GPU.
#pragma once
#include <cstdint>

#include <algorithm>

#include "prim/device/histogram/histogram_kernels.cuh"
#include "prim/device/histogram/tuning_histogram.h"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/dtype.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace histogram {

constexpr int64_t kSharedBudget = Tuning::kSharedBudget;
constexpr int kOrderedBlocks = Tuning::kOrderedBlocks;

// Blocks of `kernel` resident on the device with `shared_bytes` of dynamic shared memory (allowed first
// where it is over the default 48 KB).
template <typename Kernel>
int64_t resident_grid(Kernel kernel, int threads, size_t shared_bytes) {
  if (shared_bytes > 48 * 1024) {
    GPUPRIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
  }
  return resident_blocks(kernel, threads, shared_bytes);
}

// Whether count() keeps num_bins counters in global memory (one global atomic an item): past a block's shared
// memory. A caller that already makes one pass over its items may then count in that pass instead.
inline bool counts_in_global_memory(int64_t num_bins) {
  return num_bins * int64_t(sizeof(unsigned)) > current_device_info().max_shared_per_block_optin;
}

template <typename Index, typename Binner>
void count(const Index* x, int64_t n, Binner binner, unsigned long long* counts, unsigned long long* overflow,
           cudaStream_t stream) {
  const int64_t num_bins = binner.num_bins;
  const DeviceInfo& info = current_device_info();
  const int64_t bin_bytes = num_bins * int64_t(sizeof(unsigned));
  if (counts_in_global_memory(num_bins)) {
    const int64_t grid = int64_t(info.sm_count) * (info.max_threads_per_sm / kThreads);
    count_global_kernel<Index, Binner><<<grid_for(n, kThreads, grid), kThreads, 0, stream>>>(x, n, binner, counts,
                                                                                              overflow);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const int replicas = int(std::clamp<int64_t>(kSharedBudget / bin_bytes, 1, kWarps));
  const size_t shared_bytes = size_t(replicas * bin_bytes);
  const bool vector = aligned(x, Tuning::kLaneBytes);
  auto kernel = vector ? count_kernel<Index, true, Binner> : count_kernel<Index, false, Binner>;
  const int64_t items_per_block = int64_t(kThreads) * items_per_lane<Index>();
  const unsigned grid = grid_for(n, items_per_block, resident_grid(kernel, kThreads, shared_bytes));
  kernel<<<grid, kThreads, shared_bytes, stream>>>(x, n, binner, replicas, counts, overflow);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Index, typename Acc, typename Binner>
void weighted_atomic(const Index* x, const Acc* weights, int64_t n, Binner binner, Acc* sums,
                     unsigned long long* overflow, cudaStream_t stream) {
  const int64_t bin_bytes = binner.num_bins * int64_t(sizeof(Acc));
  if (bin_bytes <= kSharedBudget) {
    auto kernel = weighted_atomic_kernel<Index, Acc, true, Binner>;
    const unsigned grid = grid_for(n, kThreads, resident_grid(kernel, kThreads, size_t(bin_bytes)));
    kernel<<<grid, kThreads, size_t(bin_bytes), stream>>>(x, weights, n, binner, sums, overflow);
  } else {
    auto kernel = weighted_atomic_kernel<Index, Acc, false, Binner>;
    const unsigned grid = grid_for(n, kThreads, resident_grid(kernel, kThreads, 0));
    kernel<<<grid, kThreads, 0, stream>>>(x, weights, n, binner, sums, overflow);
  }
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Index, typename Acc, typename Binner>
void weighted_ordered(const Index* x, const Acc* weights, int64_t n, Binner binner, Acc* sums,
                      unsigned long long* overflow, Workspace& workspace, cudaStream_t stream) {
  const int64_t num_bins = binner.num_bins;
  const int64_t bin_bytes = num_bins * int64_t(sizeof(Acc));
  // A histogram a warp in shared memory, or else one warp per block with its histogram in global memory
  // (fewer warps when the bins are many).
  const bool shared = bin_bytes * kWarps <= kSharedBudget;
  const int64_t blocks = shared ? kOrderedBlocks
                                : std::clamp<int64_t>(Tuning::kOrderedGlobalBudget / bin_bytes, 1,
                                                      int64_t(kOrderedBlocks) * kWarps);
  Acc* partials = static_cast<Acc*>(workspace.allocate(size_t(blocks * bin_bytes)));
  if (shared) {
    weighted_ordered_kernel<Index, Acc, true, Binner>
        <<<unsigned(blocks), kThreads, size_t(bin_bytes * kWarps), stream>>>(x, weights, n, binner, partials, overflow);
  } else {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(partials, 0, size_t(blocks * bin_bytes), stream));
    weighted_ordered_kernel<Index, Acc, false, Binner>
        <<<unsigned(blocks), kWarpSize, 0, stream>>>(x, weights, n, binner, partials, overflow);
  }
  GPUPRIM_LAUNCH_CHECK();
  sum_partials_kernel<Acc><<<grid_for(num_bins, kThreads, 1 << 20), kThreads, 0, stream>>>(partials, blocks,
                                                                                          num_bins, sums);
  GPUPRIM_LAUNCH_CHECK();
}

// The whole histogram: zeroes the outputs, then counts (weights == nullptr: int64 counts) or sums
// weights (already in count_type, float32 or float64), deterministically when asked.
template <typename Value, typename Binner>
void launch(const Value* x, int64_t n, Binner binner, const void* weights, DType count_type, void* counts,
            int64_t* overflow, bool deterministic, Workspace& workspace, cudaStream_t stream) {
  auto* overflow_u = reinterpret_cast<unsigned long long*>(overflow);
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(overflow, 0, sizeof(int64_t), stream));
  const size_t count_bytes = size_t(binner.num_bins) * (count_type == DType::kFloat32 ? 4 : 8);
  const bool ordered = weights != nullptr && deterministic;
  // The ordered path writes every sum itself, except when there is nothing to add.
  if (!ordered || n == 0) GPUPRIM_CUDA_CHECK(cudaMemsetAsync(counts, 0, count_bytes, stream));
  if (n == 0) return;
  if (weights == nullptr) {
    count(x, n, binner, static_cast<unsigned long long*>(counts), overflow_u, stream);
  } else if (count_type == DType::kFloat32) {
    const auto* w = static_cast<const float*>(weights);
    ordered ? weighted_ordered(x, w, n, binner, static_cast<float*>(counts), overflow_u, workspace, stream)
            : weighted_atomic(x, w, n, binner, static_cast<float*>(counts), overflow_u, stream);
  } else {
    const auto* w = static_cast<const double*>(weights);
    ordered ? weighted_ordered(x, w, n, binner, static_cast<double*>(counts), overflow_u, workspace, stream)
            : weighted_atomic(x, w, n, binner, static_cast<double*>(counts), overflow_u, stream);
  }
}

}  // namespace histogram
}  // namespace gpuprim
