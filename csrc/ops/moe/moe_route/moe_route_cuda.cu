// Kernels of gpuprim::moe_route_metadata. Every path is deterministic (stable ranking, integer counts only)
// and sync-free (every size is fixed by the arguments).
//
// num_experts <= kMaxFastExperts: the sort-free path (moe_route_fast_cuda.cu). drop='score' with a capacity first
// picks the kept pairs with a sort (below) and then takes that path.
//
// More experts: a stable radix sort of (expert key, flat index) over only the bits the expert ids need (one or
// two 8-bit passes for E <= 65535):
//   keys       expert id per flat index (out-of-range ids -> E, the "dropped" key)
//   [score]    sort (expert, descending-gate key) pairs, keep the first `capacity` of each expert, others -> E
//   sort       (key, flat) stably: each expert's pairs in flat order (token, then choice)
//   offsets    one block: per-expert counts by binary search on the sorted keys, capacity, padding, scan
//   scatter    slots[flat] and token_ids[row] for every sorted position
#include <algorithm>
#include <climits>
#include <cstdint>

#include "ops/moe/moe_route/moe_route_cuda.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/util/cub.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace {

using moe::checked_expert_key;
using moe::kMaxFastExperts;
using moe::round_up;
using moe::route_fast;

constexpr int kThreads = kBlockThreads;
constexpr int kScanThreads = 1024;
constexpr int64_t kMaxBlocks = 4096;  // the pair kernels are grid-stride loops: more blocks add nothing

unsigned blocks_for(int64_t n) { return grid_for(n, kThreads, kMaxBlocks); }

// First position in the ascending keys[0, n) whose key is >= value.
template <typename Key>
__device__ __forceinline__ int64_t lower_bound(const Key* keys, int64_t n, Key value) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (keys[mid] < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

__global__ void __launch_bounds__(kThreads) position_keys_kernel(const int64_t* __restrict__ ids, int n,
                                                                 int64_t experts, InputCheck check,
                                                                 uint32_t* __restrict__ keys,
                                                                 int* __restrict__ flat) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) {
    keys[i] = checked_expert_key(ids[i], experts, i, &check);
    flat[i] = int(i);
  }
}

__global__ void __launch_bounds__(kThreads) score_keys_kernel(const int64_t* __restrict__ ids,
                                                              const float* __restrict__ gates, int n, int64_t experts,
                                                              InputCheck check, uint64_t* __restrict__ keys,
                                                              int* __restrict__ flat) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) {
    keys[i] = (uint64_t(checked_expert_key(ids[i], experts, i, &check)) << 32) | moe_score_key(gates[i]);
    flat[i] = int(i);
  }
}

// After sorting by (expert, descending gate) stably: a pair is kept when fewer than `capacity` pairs of its
// expert come before it; dropped pairs get the key E.
__global__ void __launch_bounds__(kThreads) keep_by_score_kernel(const uint64_t* __restrict__ sorted_keys,
                                                                 const int* __restrict__ sorted_flat, int n,
                                                                 int64_t experts, int64_t capacity,
                                                                 uint32_t* __restrict__ keys) {
  for (int64_t p = int64_t(blockIdx.x) * kThreads + threadIdx.x; p < n; p += int64_t(gridDim.x) * kThreads) {
    const uint64_t e = sorted_keys[p] >> 32;
    uint32_t key = uint32_t(experts);
    if (e < uint64_t(experts)) {
      const int64_t first = lower_bound<uint64_t>(sorted_keys, p, e << 32);
      if (p - first < capacity) key = uint32_t(e);
    }
    keys[sorted_flat[p]] = key;
  }
}

// One block: counts (capped), padded exclusive scan into offsets, each expert's first sorted position.
__global__ void __launch_bounds__(kScanThreads) offsets_kernel(const uint32_t* __restrict__ sorted_keys, int n,
                                                               MoeRouteShape shape, int64_t* __restrict__ counts,
                                                               int64_t* __restrict__ offsets,
                                                               int64_t* __restrict__ starts,
                                                               int64_t* __restrict__ num_dropped) {
  using Scan = cub::BlockScan<long long, kScanThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ long long first_of[kScanThreads + 1];  // first sorted position of each expert of the chunk, + next
  const long long capacity = shape.capacity < 0 ? LLONG_MAX : shape.capacity;
  long long padded_base = 0, kept_base = 0;
  for (int64_t chunk = 0; chunk < shape.num_experts; chunk += kScanThreads) {
    const int64_t e = chunk + threadIdx.x;
    // One binary search per expert: key E (dropped pairs) starts right after the last expert's pairs.
    if (e <= shape.num_experts) first_of[threadIdx.x] = lower_bound<uint32_t>(sorted_keys, n, uint32_t(e));
    if (threadIdx.x == 0 && chunk + kScanThreads <= shape.num_experts) {
      first_of[kScanThreads] = lower_bound<uint32_t>(sorted_keys, n, uint32_t(chunk + kScanThreads));
    }
    __syncthreads();
    long long count = 0, first = 0;
    if (e < shape.num_experts) {
      first = first_of[threadIdx.x];
      count = min(first_of[threadIdx.x + 1] - first, capacity);
    }
    const long long padded = round_up(count, shape.pad_to);
    long long padded_before, padded_total, kept_before, kept_total;
    Scan(temp).ExclusiveSum(padded, padded_before, padded_total);
    __syncthreads();
    Scan(temp).ExclusiveSum(count, kept_before, kept_total);
    __syncthreads();
    if (e < shape.num_experts) {
      counts[e] = count;
      offsets[e] = padded_base + padded_before;
      starts[e] = first;
    }
    padded_base += padded_total;
    kept_base += kept_total;
  }
  if (threadIdx.x == 0) {
    offsets[shape.num_experts] = padded_base;
    num_dropped[0] = n - kept_base;
  }
}

__global__ void __launch_bounds__(kThreads) scatter_kernel(const uint32_t* __restrict__ sorted_keys,
                                                           const int* __restrict__ sorted_flat, int n,
                                                           MoeRouteShape shape, const int64_t* __restrict__ counts,
                                                           const int64_t* __restrict__ offsets,
                                                           const int64_t* __restrict__ starts,
                                                           int64_t* __restrict__ slots,
                                                           int64_t* __restrict__ token_ids) {
  for (int64_t p = int64_t(blockIdx.x) * kThreads + threadIdx.x; p < n; p += int64_t(gridDim.x) * kThreads) {
    const uint32_t e = sorted_keys[p];
    const int flat = sorted_flat[p];
    int64_t slot = -1;
    if (e < shape.num_experts) {
      const int64_t rank = p - starts[e];
      const int64_t row = offsets[e] + rank;
      if (rank < counts[e] && row < shape.rows) {
        slot = row;
        token_ids[row] = flat / shape.k;
      }
    }
    slots[flat] = slot;
  }
}

}  // namespace

void moe_route_metadata_cuda_launch(const int64_t* expert_ids, const float* gates, MoeRouteShape shape,
                                    int64_t* counts, int64_t* offsets, int64_t* slots, int64_t* token_ids,
                                    int64_t* num_dropped, Workspace& workspace, cudaStream_t stream) {
  const int n = static_cast<int>(shape.tokens * shape.k);
  const int64_t experts = shape.num_experts;
  const bool fast = experts <= kMaxFastExperts;
  const bool by_score = shape.drop == MoeDrop::kScore && shape.capacity >= 0 && n > 0;
  if (fast && !by_score) {
    return route_fast<int64_t>(expert_ids, n, shape, counts, offsets, slots, token_ids, num_dropped, workspace,
                               stream);
  }
  // Sort buffers: [0] the input, [1] the alternate (radix_sort::sort_pairs ping-pongs between them).
  const size_t items = std::max(n, 1);
  uint32_t* keys[2] = {static_cast<uint32_t*>(workspace.allocate(sizeof(uint32_t) * items)), nullptr};
  int* flat[2] = {static_cast<int*>(workspace.allocate(sizeof(int) * items)),
                  static_cast<int*>(workspace.allocate(sizeof(int) * items))};
  const int expert_bits = bits_to_hold(uint64_t(experts));
  if (by_score) {
    uint64_t* score_keys[2] = {static_cast<uint64_t*>(workspace.allocate(sizeof(uint64_t) * items)),
                               static_cast<uint64_t*>(workspace.allocate(sizeof(uint64_t) * items))};
    score_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(expert_ids, gates, n, experts,
                                                                shape.expert_ids_check, score_keys[0], flat[0]);
    GPUPRIM_LAUNCH_CHECK();
    const int sorted = radix_sort::sort_pairs<uint64_t, int>(score_keys, flat, n, 32 + expert_bits, workspace, stream);
    keep_by_score_kernel<<<blocks_for(n), kThreads, 0, stream>>>(score_keys[sorted], flat[sorted], n, experts,
                                                                 shape.capacity, keys[0]);
    GPUPRIM_LAUNCH_CHECK();
    // keys[0][flat]: the expert of each kept pair, E for the dropped ones; the capacity is already applied.
    if (fast) {
      return route_fast<uint32_t>(keys[0], n, shape, counts, offsets, slots, token_ids, num_dropped, workspace,
                                  stream);
    }
  }
  keys[1] = static_cast<uint32_t*>(workspace.allocate(sizeof(uint32_t) * items));
  auto* starts = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * experts));
  if (shape.rows > 0) GPUPRIM_CUDA_CHECK(cudaMemsetAsync(token_ids, 0xff, sizeof(int64_t) * shape.rows, stream));
  int sorted = 0;
  if (n > 0) {
    // The flat indices 0..n-1 as the sort's values (the score sort above reordered flat[0]); with drop='score'
    // the keys are already in keys[0], and the kernel's keys go to the scratch buffer keys[1].
    position_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(expert_ids, n, experts, shape.expert_ids_check,
                                                                 keys[by_score ? 1 : 0], flat[0]);
    GPUPRIM_LAUNCH_CHECK();
    sorted = radix_sort::sort_pairs<uint32_t, int>(keys, flat, n, expert_bits, workspace, stream);
  }
  offsets_kernel<<<1, kScanThreads, 0, stream>>>(keys[sorted], n, shape, counts, offsets, starts, num_dropped);
  GPUPRIM_LAUNCH_CHECK();
  if (n > 0) {
    scatter_kernel<<<blocks_for(n), kThreads, 0, stream>>>(keys[sorted], flat[sorted], n, shape, counts, offsets,
                                                           starts, slots, token_ids);
    GPUPRIM_LAUNCH_CHECK();
  }
}

}  // namespace gpuprim
