// Histogram kernels (launched by histogram.cuh). A Binner maps each value to its bin in [0, num_bins), or -1
// to drop it (dropped values are counted): IndexBins for bincount (the value is the bin), EvenBins for
// histogram (equal-width bins over [lo, hi), computed in float64 inside the kernel), PowerOfTwoBins where
// integer shifts give EvenBins' bins.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "prim/device/histogram/tuning_histogram.h"
#include "prim/util/launch.h"
#include "prim/warp/match.cuh"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace histogram {

constexpr int kThreads = Tuning::kThreads;
constexpr int kWarps = kThreads / kWarpSize;

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

// Items per lane per step: one vector of Tuning::kLaneBytes (4 int32, 16 uint8, ...).
template <typename Index>
constexpr int items_per_lane() {
  return Tuning::kLaneBytes / sizeof(Index) > 0 ? int(Tuning::kLaneBytes / sizeof(Index)) : 1;
}

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
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  unsigned int* hist = shared_counts + (warp % replicas) * num_bins;
  const int64_t warps_total = int64_t(gridDim.x) * kWarps;
  unsigned long long dropped = 0;
  for (int64_t base = (int64_t(blockIdx.x) * kWarps + warp) * kWarpSize * kItems; base < n;
       base += warps_total * kWarpSize * kItems) {
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
      if (lane == 0) atomicAdd(&hist[bins[0]], unsigned(kWarpSize) * kItems);
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
  if (threadIdx.x % kWarpSize == 0 && dropped) atomicAdd(overflow, dropped);
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
  if (threadIdx.x % kWarpSize == 0 && dropped) atomicAdd(overflow, dropped);
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
__device__ __forceinline__ void add_in_lane_order(int64_t bin, Acc w, Acc* hist) {
  const unsigned peers = warp::match_any(bin);
  Acc group_sum = w;
  if (__all_sync(kFullMask, peers == kFullMask)) {
    group_sum = warp::sum(group_sum);
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
  if (bin >= 0 && warp::is_leader(peers)) hist[bin] += group_sum;
  __syncwarp();
}

// Deterministic float sums. kShared: blocks of kThreads, one shared histogram per warp, combined in
// warp order into partials[block]. Otherwise: blocks of one warp whose histogram is partials[block]
// itself (zeroed by the launcher). Item i goes to warp (i / 32) % warps_total: fixed by the grid.
template <typename Index, typename Acc, bool kShared, typename Binner>
__global__ void weighted_ordered_kernel(const Index* __restrict__ x, const Acc* __restrict__ weights, int64_t n,
                                        Binner binner, Acc* __restrict__ partials,
                                        unsigned long long* __restrict__ overflow) {
  constexpr int kOrderedGroups = Tuning::kOrderedGroups;
  const int64_t num_bins = binner.num_bins;
  extern __shared__ unsigned char shared_raw[];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, warps_per_block = blockDim.x / kWarpSize;
  Acc* hist = kShared ? reinterpret_cast<Acc*>(shared_raw) + warp * num_bins : partials + blockIdx.x * num_bins;
  if (kShared) {
    for (int64_t i = threadIdx.x; i < warps_per_block * num_bins; i += blockDim.x)
      reinterpret_cast<Acc*>(shared_raw)[i] = Acc(0);
    __syncthreads();
  }
  const int64_t warps_total = int64_t(gridDim.x) * warps_per_block;
  const int64_t step = warps_total * kWarpSize;  // a warp's next group of 32 items
  unsigned long long dropped = 0;
  for (int64_t first = (int64_t(blockIdx.x) * warps_per_block + warp) * kWarpSize; first < n;
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
      add_in_lane_order(bin, w, hist);
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
// conversions that bound EvenBins' throughput.
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

// Whether PowerOfTwoBins<T> gives EvenBins<T>'s bins: integers of at most 32 bits (not bool).
template <typename T>
constexpr bool kPowerOfTwoBinsExact = std::is_integral_v<T> && sizeof(T) <= 4 && !std::is_same_v<T, bool>;

// The bin width 2^shift of `bins` bins over [lo, hi) when PowerOfTwoBins<T> applies (lo and hi integers with
// |lo|, |hi| <= 2^40, where the float64 bin math is exact), else -1.
template <typename T>
int power_of_two_shift(int64_t bins, double lo, double hi) {
  constexpr double kLimit = double(int64_t(1) << 40);
  if (!kPowerOfTwoBinsExact<T> || lo != std::floor(lo) || hi != std::floor(hi) || std::fabs(lo) > kLimit ||
      std::fabs(hi) > kLimit) {
    return -1;
  }
  const double span = hi - lo;  // exact: integers below 2^41
  for (int shift = 0; shift <= 40; ++shift) {
    if (double(bins) * std::ldexp(1.0, shift) == span) return shift;
  }
  return -1;
}

}  // namespace histogram
}  // namespace gpuprim
