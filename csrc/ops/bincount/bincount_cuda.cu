#include <algorithm>
#include <cstdint>

#include "common/device_info.h"
#include "ops/bincount/bincount_launch.h"
#include "prim/histogram.cuh"
#include "prim/types.cuh"

namespace gpuprim {
namespace {

using namespace histogram;

// Shared-memory budget per block for the privatized counters: 32 KB keeps several blocks per SM.
constexpr int64_t kSharedBudget = 32 * 1024;
// Deterministic weighted path: fixed grids (never device-dependent, so bits match across GPUs).
constexpr int kOrderedBlocks = 256;
constexpr int64_t kOrderedGlobalBudget = int64_t(128) << 20;  // bytes of per-warp histograms in global memory

unsigned blocks_for(int64_t n, int64_t items_per_block, int64_t max_blocks) {
  const int64_t needed = (n + items_per_block - 1) / items_per_block;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(needed, max_blocks)));
}

template <typename Kernel>
int64_t resident_grid(Kernel kernel, int threads, size_t shared_bytes) {
  const DeviceInfo& info = current_device_info();
  if (shared_bytes > 48 * 1024) {
    GPUPRIM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
  }
  int per_sm = 0;
  GPUPRIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  return int64_t(std::max(per_sm, 1)) * info.sm_count;
}

template <typename Index>
void count(const Index* x, int64_t n, int64_t num_bins, unsigned long long* counts, unsigned long long* overflow,
           cudaStream_t stream) {
  const DeviceInfo& info = current_device_info();
  const int64_t bin_bytes = num_bins * int64_t(sizeof(unsigned));
  if (bin_bytes > info.max_shared_per_block_optin) {
    const int64_t grid = int64_t(info.sm_count) * (info.max_threads_per_sm / kThreads);
    count_global_kernel<Index><<<blocks_for(n, kThreads, grid), kThreads, 0, stream>>>(x, n, num_bins, counts, overflow);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const int replicas = int(std::clamp<int64_t>(kSharedBudget / bin_bytes, 1, kWarps));
  const size_t shared_bytes = size_t(replicas * bin_bytes);
  const bool vector = reinterpret_cast<uintptr_t>(x) % 16 == 0;
  auto kernel = vector ? count_kernel<Index, true> : count_kernel<Index, false>;
  const int64_t items_per_block = int64_t(kThreads) * items_per_lane<Index>();
  const unsigned grid = blocks_for(n, items_per_block, resident_grid(kernel, kThreads, shared_bytes));
  kernel<<<grid, kThreads, shared_bytes, stream>>>(x, n, num_bins, replicas, counts, overflow);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Index, typename Acc>
void weighted_atomic(const Index* x, const Acc* weights, int64_t n, int64_t num_bins, Acc* sums,
                     unsigned long long* overflow, cudaStream_t stream) {
  const int64_t bin_bytes = num_bins * int64_t(sizeof(Acc));
  if (bin_bytes <= kSharedBudget) {
    auto kernel = weighted_atomic_kernel<Index, Acc, true>;
    const unsigned grid = blocks_for(n, kThreads, resident_grid(kernel, kThreads, size_t(bin_bytes)));
    kernel<<<grid, kThreads, size_t(bin_bytes), stream>>>(x, weights, n, num_bins, sums, overflow);
  } else {
    auto kernel = weighted_atomic_kernel<Index, Acc, false>;
    const unsigned grid = blocks_for(n, kThreads, resident_grid(kernel, kThreads, 0));
    kernel<<<grid, kThreads, 0, stream>>>(x, weights, n, num_bins, sums, overflow);
  }
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Index, typename Acc>
void weighted_ordered(const Index* x, const Acc* weights, int64_t n, int64_t num_bins, Acc* sums,
                      unsigned long long* overflow, Workspace& workspace, cudaStream_t stream) {
  const int64_t bin_bytes = num_bins * int64_t(sizeof(Acc));
  int64_t blocks;
  if (bin_bytes * kWarps <= kSharedBudget) {
    blocks = kOrderedBlocks;
    Acc* partials = static_cast<Acc*>(workspace.allocate(size_t(blocks * bin_bytes)));
    weighted_ordered_kernel<Index, Acc, true><<<unsigned(blocks), kThreads, size_t(bin_bytes * kWarps), stream>>>(
        x, weights, n, num_bins, partials, overflow);
    GPUPRIM_LAUNCH_CHECK();
    sum_partials_kernel<Acc><<<blocks_for(num_bins, kThreads, 1 << 20), kThreads, 0, stream>>>(partials, blocks,
                                                                                              num_bins, sums);
  } else {
    // One warp per block, its histogram in global memory; fewer warps when the bins are many.
    blocks = std::clamp<int64_t>(kOrderedGlobalBudget / bin_bytes, 1, int64_t(kOrderedBlocks) * kWarps);
    Acc* partials = static_cast<Acc*>(workspace.allocate(size_t(blocks * bin_bytes)));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(partials, 0, size_t(blocks * bin_bytes), stream));
    weighted_ordered_kernel<Index, Acc, false><<<unsigned(blocks), 32, 0, stream>>>(x, weights, n, num_bins, partials,
                                                                                    overflow);
    GPUPRIM_LAUNCH_CHECK();
    sum_partials_kernel<Acc><<<blocks_for(num_bins, kThreads, 1 << 20), kThreads, 0, stream>>>(partials, blocks,
                                                                                              num_bins, sums);
  }
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void bincount_cuda_launch(const void* x, DType x_type, int64_t n, int64_t num_bins, const void* weights,
                          DType count_type, void* counts, int64_t* overflow, bool deterministic,
                          Workspace& workspace, cudaStream_t stream) {
  auto* overflow_u = reinterpret_cast<unsigned long long*>(overflow);
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(overflow, 0, sizeof(int64_t), stream));
  const size_t count_bytes = size_t(num_bins) * (count_type == DType::kFloat32 ? 4 : 8);
  const bool ordered = weights != nullptr && deterministic;
  if (!ordered) GPUPRIM_CUDA_CHECK(cudaMemsetAsync(counts, 0, count_bytes, stream));
  if (n == 0) return;
  GPUPRIM_DISPATCH_ALL("bincount", x_type, [&] {
    if constexpr (std::is_integral_v<scalar_t> && !std::is_same_v<scalar_t, bool>) {
      const auto* index = static_cast<const scalar_t*>(x);
      if (weights == nullptr) {
        count(index, n, num_bins, static_cast<unsigned long long*>(counts), overflow_u, stream);
      } else if (count_type == DType::kFloat32) {
        const auto* w = static_cast<const float*>(weights);
        ordered ? weighted_ordered(index, w, n, num_bins, static_cast<float*>(counts), overflow_u, workspace, stream)
                : weighted_atomic(index, w, n, num_bins, static_cast<float*>(counts), overflow_u, stream);
      } else {
        const auto* w = static_cast<const double*>(weights);
        ordered ? weighted_ordered(index, w, n, num_bins, static_cast<double*>(counts), overflow_u, workspace, stream)
                : weighted_atomic(index, w, n, num_bins, static_cast<double*>(counts), overflow_u, stream);
      }
    } else {
      unsupported_dtype("bincount", x_type);
    }
  });
}

}  // namespace gpuprim
