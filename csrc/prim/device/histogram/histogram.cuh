// Histogram kernels and their launchers. A Binner maps each value to its bin in [0, num_bins), or -1
// to drop it (dropped values are counted): IndexBins for bincount (the value is the bin), EvenBins
// for histogram (equal-width bins over [lo, hi), computed in float64 inside the kernel).
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

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/dtype.h"
#include "prim/util/workspace.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace histogram {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kOrderedGroups = 8;  // weighted_ordered_kernel: groups of 32 items a warp loads at once
constexpr unsigned kFullMask = 0xffffffffu;

// bincount: an integer value is its own bin when in [0, num_bins).
template <typename Index>
struct IndexBins {
  int64_t num_bins;
  __device__ __forceinline__ int64_t operator()(Index v) const {
    const int64_t b = static_cast<int64_t>(v);
    return b >= 0 && b < num_bins ? b : -1;
  }
};

template <typename T>
__device__ __forceinline__ double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return double(__half2float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return double(__bfloat162float(v));
  } else {
    return static_cast<double>(v);
  }
}

// histogram: bins equal-width bins over [lo, hi); NaN and values outside are dropped. The same
// float64 steps as the CPU kernel (subtract, multiply by bins / (hi - lo), floor, clamp), each
// rounded once, so both give the same bin for every value.
template <typename T>
struct EvenBins {
  int64_t num_bins;
  double lo, hi, scale;
  __device__ __forceinline__ int64_t operator()(T v) const {
    const double d = to_double(v);
    if (!(d >= lo && d < hi)) return -1;
    const double position = floor(__dmul_rn(__dsub_rn(d, lo), scale));
    return static_cast<int64_t>(fmin(fmax(position, 0.0), double(num_bins - 1)));
  }
};

// Items per lane per step: one 16-byte vector (4 int32, 16 uint8, ...).
template <typename Index>
constexpr int items_per_lane() { return 16 / sizeof(Index) > 0 ? int(16 / sizeof(Index)) : 1; }

// Loads the lane's `kItems` consecutive values starting at `first`; present[j] is false past n.
template <typename Index, bool kVector, int kItems>
__device__ __forceinline__ void load_lane(const Index* x, int64_t n, int64_t first, Index (&v)[kItems],
                                          bool (&present)[kItems]) {
  if (kVector && first + kItems <= n) {
    struct alignas(16) Vec { Index items[kItems]; };
    const Vec vec = *reinterpret_cast<const Vec*>(x + first);
#pragma unroll
    for (int j = 0; j < kItems; ++j) { v[j] = vec.items[j]; present[j] = true; }
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      present[j] = first + j < n;
      v[j] = present[j] ? x[first + j] : Index{};
    }
  }
}

template <typename Index, bool kVector, typename Binner>
__global__ void __launch_bounds__(kThreads) count_kernel(const Index* __restrict__ x, int64_t n, Binner binner,
                                                         int replicas, unsigned long long* __restrict__ counts,
                                                         unsigned long long* __restrict__ overflow) {
  constexpr int kItems = items_per_lane<Index>();
  const int64_t num_bins = binner.num_bins;
  // 32-bit shared counters cannot wrap: a block sees n / gridDim.x items, far below 2^32 for any
  // tensor that fits in device memory with the grids the launcher uses.
  extern __shared__ unsigned int shared_counts[];  // [replicas][num_bins]
  for (int64_t i = threadIdx.x; i < replicas * num_bins; i += blockDim.x) shared_counts[i] = 0;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned int* hist = shared_counts + (warp % replicas) * num_bins;
  const int64_t warps_total = int64_t(gridDim.x) * kWarps;
  unsigned long long dropped = 0;
  for (int64_t base = (int64_t(blockIdx.x) * kWarps + warp) * 32 * kItems; base < n; base += warps_total * 32 * kItems) {
    Index v[kItems];
    bool present[kItems];
    load_lane<Index, kVector, kItems>(x, n, base + lane * kItems, v, present);
    int64_t bins[kItems];  // -1: dropped or absent
    bool same = true;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t b = present[j] ? binner(v[j]) : -1;
      dropped += present[j] && b < 0;
      bins[j] = b;
      same = same && bins[j] == bins[0];
    }
    // Whole warp on one bin (the skewed case): one shared atomic instead of 32 colliding ones.
    // (The shuffle must run on every lane: inside a short-circuit && it would diverge and hang.)
    const int64_t lane0_bin = __shfl_sync(kFullMask, bins[0], 0);
    if (__all_sync(kFullMask, same && bins[0] >= 0 && bins[0] == lane0_bin)) {
      if (lane == 0) atomicAdd(&hist[bins[0]], 32u * kItems);
      continue;
    }
    int64_t run_bin = bins[0];
    unsigned run = 1;
#pragma unroll
    for (int j = 1; j < kItems; ++j) {
      if (bins[j] == run_bin) {
        ++run;
      } else {
        if (run_bin >= 0) atomicAdd(&hist[run_bin], run);
        run_bin = bins[j];
        run = 1;
      }
    }
    if (run_bin >= 0) atomicAdd(&hist[run_bin], run);
  }
  dropped = warp::sum(dropped);
  if (lane == 0 && dropped) atomicAdd(overflow, dropped);
  __syncthreads();
  for (int64_t bin = threadIdx.x; bin < num_bins; bin += blockDim.x) {
    unsigned long long total = 0;
    for (int r = 0; r < replicas; ++r) total += shared_counts[r * num_bins + bin];
    if (total) atomicAdd(&counts[bin], total);
  }
}

// Too many bins for shared memory: count straight into global memory.
template <typename Index, typename Binner>
__global__ void __launch_bounds__(kThreads) count_global_kernel(const Index* __restrict__ x, int64_t n, Binner binner,
                                                                unsigned long long* __restrict__ counts,
                                                                unsigned long long* __restrict__ overflow) {
  unsigned long long dropped = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = binner(x[i]);
    if (b >= 0) atomicAdd(&counts[b], 1ull); else ++dropped;
  }
  dropped = warp::sum(dropped);  // every lane runs the loop to its end, so the warp is converged here
  if (threadIdx.x % 32 == 0 && dropped) atomicAdd(overflow, dropped);
}

// Float sums with atomics (not deterministic). kShared: privatized per block in shared memory.
template <typename Index, typename Acc, bool kShared, typename Binner>
__global__ void __launch_bounds__(kThreads) weighted_atomic_kernel(const Index* __restrict__ x,
                                                                   const Acc* __restrict__ weights, int64_t n,
                                                                   Binner binner, Acc* __restrict__ sums,
                                                                   unsigned long long* __restrict__ overflow) {
  const int64_t num_bins = binner.num_bins;
  extern __shared__ unsigned char shared_raw[];
  Acc* hist = kShared ? reinterpret_cast<Acc*>(shared_raw) : sums;
  if (kShared) {
    for (int64_t i = threadIdx.x; i < num_bins; i += blockDim.x) hist[i] = Acc(0);
    __syncthreads();
  }
  unsigned long long dropped = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = binner(x[i]);
    if (b >= 0) atomicAdd(&hist[b], weights[i]); else ++dropped;
  }
  dropped = warp::sum(dropped);
  if (threadIdx.x % 32 == 0 && dropped) atomicAdd(overflow, dropped);
  if (kShared) {
    __syncthreads();
    for (int64_t bin = threadIdx.x; bin < num_bins; bin += blockDim.x) {
      if (hist[bin] != Acc(0)) atomicAdd(&sums[bin], hist[bin]);
    }
  }
}

// One step of weighted_ordered_kernel: adds each lane's weight w to hist[bin] (bin < 0: nothing). Each bin's
// weights in the step are summed in an order fixed by the lanes alone (the same bits every run): the whole
// warp on one bin uses a fixed butterfly; otherwise a lone lane adds its own weight and shared bins add their
// members in lane order, looping only over lanes that share a bin (a few for spread-out data instead of 32).
template <typename Acc>
__device__ __forceinline__ void add_in_lane_order(int64_t bin, Acc w, Acc* hist, int lane) {
  const unsigned peers = __match_any_sync(kFullMask, bin);
  Acc group_sum = w;
  if (__all_sync(kFullMask, peers == kFullMask)) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) group_sum += __shfl_xor_sync(kFullMask, group_sum, offset);
  } else {
    unsigned shared_lanes = __ballot_sync(kFullMask, __popc(peers) > 1);
    if (__popc(peers) > 1) group_sum = Acc(0);
    while (shared_lanes) {  // warp-uniform loop
      const int k = __ffs(shared_lanes) - 1;
      shared_lanes &= shared_lanes - 1;
      const Acc wk = __shfl_sync(kFullMask, w, k);
      if (peers & (1u << k)) group_sum += wk;
    }
  }
  if (bin >= 0 && lane == __ffs(peers) - 1) hist[bin] += group_sum;
  __syncwarp();
}

// Deterministic float sums. kShared: blocks of kThreads, one shared histogram per warp, combined in
// warp order into partials[block]. Otherwise: blocks of one warp whose histogram is partials[block]
// itself (zeroed by the launcher). Item i goes to warp (i / 32) % warps_total: fixed by the grid.
template <typename Index, typename Acc, bool kShared, typename Binner>
__global__ void weighted_ordered_kernel(const Index* __restrict__ x, const Acc* __restrict__ weights, int64_t n,
                                        Binner binner, Acc* __restrict__ partials,
                                        unsigned long long* __restrict__ overflow) {
  const int64_t num_bins = binner.num_bins;
  extern __shared__ unsigned char shared_raw[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps_per_block = blockDim.x / 32;
  Acc* hist = kShared ? reinterpret_cast<Acc*>(shared_raw) + warp * num_bins : partials + blockIdx.x * num_bins;
  if (kShared) {
    for (int64_t i = threadIdx.x; i < warps_per_block * num_bins; i += blockDim.x)
      reinterpret_cast<Acc*>(shared_raw)[i] = Acc(0);
    __syncthreads();
  }
  const int64_t warps_total = int64_t(gridDim.x) * warps_per_block;
  const int64_t step = warps_total * 32;  // a warp's next group of 32 items
  unsigned long long dropped = 0;
  for (int64_t first = (int64_t(blockIdx.x) * warps_per_block + warp) * 32; first < n;
       first += step * kOrderedGroups) {
    // The next kOrderedGroups groups' values and weights are loaded before the first is added: the fixed grid
    // has few warps, so one load in flight per lane left it waiting on memory. The additions keep their order.
    Index xs[kOrderedGroups];
    Acc ws[kOrderedGroups];
#pragma unroll
    for (int u = 0; u < kOrderedGroups; ++u) {
      const int64_t i = first + u * step + lane;
      xs[u] = i < n ? x[i] : Index();
      ws[u] = i < n ? weights[i] : Acc(0);
    }
#pragma unroll
    for (int u = 0; u < kOrderedGroups; ++u) {
      const int64_t i = first + u * step + lane;
      if (first + u * step >= n) break;  // warp-uniform
      int64_t bin = -1;
      Acc w = Acc(0);
      if (i < n) {
        const int64_t b = binner(xs[u]);
        if (b >= 0) { bin = b; w = ws[u]; } else { ++dropped; }
      }
      add_in_lane_order(bin, w, hist, lane);
    }
  }
  dropped = warp::sum(dropped);
  if (lane == 0 && dropped) atomicAdd(overflow, dropped);
  if (kShared) {
    __syncthreads();
    const Acc* warp_hists = reinterpret_cast<const Acc*>(shared_raw);
    for (int64_t bin = threadIdx.x; bin < num_bins; bin += blockDim.x) {
      Acc total = Acc(0);
      for (int w2 = 0; w2 < warps_per_block; ++w2) total += warp_hists[w2 * num_bins + bin];
      partials[blockIdx.x * num_bins + bin] = total;
    }
  }
}

// sums[bin] = partials[0][bin] + partials[1][bin] + ... in that order.
template <typename Acc>
__global__ void __launch_bounds__(kThreads) sum_partials_kernel(const Acc* __restrict__ partials, int64_t num_partials,
                                                                int64_t num_bins, Acc* __restrict__ sums) {
  for (int64_t bin = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; bin < num_bins;
       bin += int64_t(gridDim.x) * blockDim.x) {
    Acc total = Acc(0);
    for (int64_t p = 0; p < num_partials; ++p) total += partials[p * num_bins + bin];
    sums[bin] = total;
  }
}

// histogram of 8-32-bit integers with an integer lo and a power-of-two bin width 2^shift: there the
// float64 steps of EvenBins are exact, so (v - lo) >> shift is the same bin, without the float64
// conversions that bound EvenBins' throughput (about 0.4 G values/ms on the H200).
template <typename T>
struct PowerOfTwoBins {
  int64_t num_bins;
  int64_t lo, hi;
  int shift;
  __device__ __forceinline__ int64_t operator()(T v) const {
    const int64_t x = static_cast<int64_t>(v);
    return x >= lo && x < hi ? (x - lo) >> shift : -1;
  }
};

// ---- launchers ----------------------------------------------------------------------------

// Shared-memory budget per block for the privatized counters: 32 KB keeps several blocks per SM.
constexpr int64_t kSharedBudget = 32 * 1024;
// Deterministic weighted path: fixed grids (never device-dependent, so bits match across GPUs).
constexpr int kOrderedBlocks = 256;
constexpr int64_t kOrderedGlobalBudget = int64_t(128) << 20;  // bytes of per-warp histograms in global memory

inline unsigned blocks_for(int64_t n, int64_t items_per_block, int64_t max_blocks) {
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

template <typename Index, typename Binner>
void count(const Index* x, int64_t n, Binner binner, unsigned long long* counts, unsigned long long* overflow,
           cudaStream_t stream) {
  const int64_t num_bins = binner.num_bins;
  const DeviceInfo& info = current_device_info();
  const int64_t bin_bytes = num_bins * int64_t(sizeof(unsigned));
  if (bin_bytes > info.max_shared_per_block_optin) {
    const int64_t grid = int64_t(info.sm_count) * (info.max_threads_per_sm / kThreads);
    count_global_kernel<Index, Binner><<<blocks_for(n, kThreads, grid), kThreads, 0, stream>>>(x, n, binner, counts,
                                                                                                overflow);
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  const int replicas = int(std::clamp<int64_t>(kSharedBudget / bin_bytes, 1, kWarps));
  const size_t shared_bytes = size_t(replicas * bin_bytes);
  const bool vector = reinterpret_cast<uintptr_t>(x) % 16 == 0;
  auto kernel = vector ? count_kernel<Index, true, Binner> : count_kernel<Index, false, Binner>;
  const int64_t items_per_block = int64_t(kThreads) * items_per_lane<Index>();
  const unsigned grid = blocks_for(n, items_per_block, resident_grid(kernel, kThreads, shared_bytes));
  kernel<<<grid, kThreads, shared_bytes, stream>>>(x, n, binner, replicas, counts, overflow);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Index, typename Acc, typename Binner>
void weighted_atomic(const Index* x, const Acc* weights, int64_t n, Binner binner, Acc* sums,
                     unsigned long long* overflow, cudaStream_t stream) {
  const int64_t bin_bytes = binner.num_bins * int64_t(sizeof(Acc));
  if (bin_bytes <= kSharedBudget) {
    auto kernel = weighted_atomic_kernel<Index, Acc, true, Binner>;
    const unsigned grid = blocks_for(n, kThreads, resident_grid(kernel, kThreads, size_t(bin_bytes)));
    kernel<<<grid, kThreads, size_t(bin_bytes), stream>>>(x, weights, n, binner, sums, overflow);
  } else {
    auto kernel = weighted_atomic_kernel<Index, Acc, false, Binner>;
    const unsigned grid = blocks_for(n, kThreads, resident_grid(kernel, kThreads, 0));
    kernel<<<grid, kThreads, 0, stream>>>(x, weights, n, binner, sums, overflow);
  }
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Index, typename Acc, typename Binner>
void weighted_ordered(const Index* x, const Acc* weights, int64_t n, Binner binner, Acc* sums,
                      unsigned long long* overflow, Workspace& workspace, cudaStream_t stream) {
  const int64_t num_bins = binner.num_bins;
  const int64_t bin_bytes = num_bins * int64_t(sizeof(Acc));
  int64_t blocks;
  if (bin_bytes * kWarps <= kSharedBudget) {
    blocks = kOrderedBlocks;
    Acc* partials = static_cast<Acc*>(workspace.allocate(size_t(blocks * bin_bytes)));
    weighted_ordered_kernel<Index, Acc, true, Binner>
        <<<unsigned(blocks), kThreads, size_t(bin_bytes * kWarps), stream>>>(x, weights, n, binner, partials, overflow);
    GPUPRIM_LAUNCH_CHECK();
    sum_partials_kernel<Acc><<<blocks_for(num_bins, kThreads, 1 << 20), kThreads, 0, stream>>>(partials, blocks,
                                                                                              num_bins, sums);
  } else {
    // One warp per block, its histogram in global memory; fewer warps when the bins are many.
    blocks = std::clamp<int64_t>(kOrderedGlobalBudget / bin_bytes, 1, int64_t(kOrderedBlocks) * kWarps);
    Acc* partials = static_cast<Acc*>(workspace.allocate(size_t(blocks * bin_bytes)));
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(partials, 0, size_t(blocks * bin_bytes), stream));
    weighted_ordered_kernel<Index, Acc, false, Binner>
        <<<unsigned(blocks), 32, 0, stream>>>(x, weights, n, binner, partials, overflow);
    GPUPRIM_LAUNCH_CHECK();
    sum_partials_kernel<Acc><<<blocks_for(num_bins, kThreads, 1 << 20), kThreads, 0, stream>>>(partials, blocks,
                                                                                              num_bins, sums);
  }
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
