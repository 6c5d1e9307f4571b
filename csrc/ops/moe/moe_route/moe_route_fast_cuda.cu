// The sort-free path of gpuprim::moe_route_metadata's CUDA kernels (num_experts <= kMaxFastExperts). The flat
// (token, choice) pairs are cut into chunks of kChunk; block b of the grid owns a contiguous tile of chunks.
// Up to kMaxJoinedTiles tiles it is one launch of route_kernel (cooperative when there is more than one tile: each
// block counts its tile, publishes the histogram and waits for the grid), which saves two launches of host time
// in a small MoE step; above it three:
//   count_kernel   each tile's expert histogram -> tile_counts
//   prefix_kernel  one block per expert: its count in earlier tiles (exclusive scan over tiles) and its total
//   route_kernel   each block: expert totals and its tile's per-expert prefix (E + E reads), capacity, padded
//                  exclusive scan -> offsets; padding rows -> -1; then chunk by chunk in flat order: each warp
//                  ranks its 256 pairs (peer lanes from one ballot per expert-id bit), per-warp counts are
//                  combined in warp order, every pair gets slot = offset + earlier pairs of its expert, and
//                  token ids go out through shared memory in the chunk's expert order (coalesced row writes).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ops/moe/moe_route/moe_route_cuda.cuh"
#include "prim/util/cub.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/launch.h"
#include "prim/warp/match.cuh"

namespace gpuprim {
namespace moe {
namespace {

constexpr int kRouteThreads = kBlockThreads;
constexpr int kRouteWarps = kRouteThreads / kWarpSize;
constexpr int kItems = 8;                       // pairs per thread per chunk
constexpr int kWarpSpan = kWarpSize * kItems;   // consecutive pairs a warp ranks per chunk
constexpr int kChunk = kRouteThreads * kItems;  // pairs per chunk (per-warp counts fit in 16 bits)
constexpr uint32_t kNoPair = 0xffffffffu;       // key of a position past the last pair
constexpr int64_t kMaxTiles = 2048;             // tile_counts + tile_before: 8 bytes per (tile, expert) of workspace
constexpr int64_t kMaxJoinedTiles = 32;         // each block of the joined launch reads tiles x E published counts

// route_kernel's dynamic shared memory: per expert row_base 8, limit 4, chunk_start 4 (+ 4 once), warp_hist
// 2 x kRouteWarps; per pair of a chunk its staged token id 4 and expert 2. E = 1024: 45060 bytes (< 48 KiB).
constexpr size_t route_shared_bytes(int64_t experts) {
  return size_t(32 * experts + 4) + size_t(6 * kChunk);
}
using RouteScan = cub::BlockScan<long long, kRouteThreads>;  // route_kernel's scans over experts
using ChunkScan = cub::BlockScan<int, kRouteThreads>;
static_assert(route_shared_bytes(kMaxFastExperts) + sizeof(RouteScan::TempStorage) +
                      sizeof(ChunkScan::TempStorage) <= 48 * 1024,
              "route_kernel would need an opt-in for more than 48 KiB of shared memory");

struct TilePlan {
  int64_t chunks, tiles, chunks_per_tile;
};

TilePlan plan_tiles(int64_t n, int64_t experts) {
  const int64_t chunks = std::max<int64_t>((n + kChunk - 1) / kChunk, 1);
  const int64_t wanted = std::min(chunks, kMaxTiles);
  const int64_t per_tile = (chunks + wanted - 1) / wanted;
  return {chunks, (chunks + per_tile - 1) / per_tile, per_tile};
}

// Pair i (of kItems) of this thread in `chunk`: warp w ranks the span [w * kWarpSpan, (w + 1) * kWarpSpan).
__device__ __forceinline__ int64_t pair_of(int64_t chunk, int i) {
  return chunk * kChunk + (threadIdx.x / kWarpSize) * kWarpSpan + i * kWarpSize + threadIdx.x % kWarpSize;
}

// Id = int64_t: the user's ids, recorded when out of range if `check` is given; uint32_t: keys (E = dropped).
template <typename Id>
__device__ __forceinline__ void load_keys(const Id* __restrict__ ids, int64_t n, int64_t chunk, int64_t experts,
                                          uint32_t (&keys)[kItems], const InputCheck* check = nullptr) {
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int64_t pair = pair_of(chunk, i);
    if constexpr (std::is_same_v<Id, int64_t>) {
      keys[i] = pair < n ? checked_expert_key(ids[pair], experts, pair, check) : kNoPair;
    } else {
      keys[i] = pair < n ? expert_key(int64_t(ids[pair]), experts) : kNoPair;
    }
  }
}

__device__ __forceinline__ void count_keys(const uint32_t (&keys)[kItems], int64_t experts, int* hist) {
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (int64_t(keys[i]) < experts) atomicAdd(&hist[keys[i]], 1);  // integer: exact in any order
  }
}

// Expert histogram of each tile (block) -> tile_counts[tile * E + e]. Shared memory: E ints.
template <typename Id>
__global__ void __launch_bounds__(kRouteThreads) count_kernel(const Id* __restrict__ ids, int64_t n, int64_t experts,
                                                              int64_t chunks, int64_t chunks_per_tile,
                                                              int* __restrict__ tile_counts) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  int* hist = reinterpret_cast<int*>(shared_bytes);
  for (int64_t e = threadIdx.x; e < experts; e += kRouteThreads) hist[e] = 0;
  __syncthreads();
  const int64_t first = int64_t(blockIdx.x) * chunks_per_tile, end = std::min(first + chunks_per_tile, chunks);
  for (int64_t chunk = first; chunk < end; ++chunk) {
    uint32_t keys[kItems];
    load_keys(ids, n, chunk, experts, keys);
    count_keys(keys, experts, hist);
  }
  __syncthreads();
  for (int64_t e = threadIdx.x; e < experts; e += kRouteThreads) tile_counts[blockIdx.x * experts + e] = hist[e];
}

// tile_before[tile * E + e] = pairs of expert e in tiles before `tile`, total[e] = all of them: block e scans
// column e of tile_counts (integers: exact).
__global__ void __launch_bounds__(kRouteThreads) prefix_kernel(const int* __restrict__ tile_counts, int64_t tiles,
                                                               int64_t experts, int* __restrict__ tile_before,
                                                               int* __restrict__ total) {
  using Scan = cub::BlockScan<int, kRouteThreads>;
  __shared__ typename Scan::TempStorage scan_temp;
  const int64_t e = blockIdx.x;
  int carry = 0;
  for (int64_t t0 = 0; t0 < tiles; t0 += kRouteThreads) {
    const int64_t t = t0 + threadIdx.x;
    const int count = t < tiles ? tile_counts[t * experts + e] : 0;
    int before, sum;
    Scan(scan_temp).ExclusiveSum(count, before, sum);
    __syncthreads();
    if (t < tiles) tile_before[t * experts + e] = carry + before;
    carry += sum;
  }
  if (threadIdx.x == 0) total[e] = carry;
}

// Everything else, one block per tile (see the top of the file). tile_before == nullptr: the tile is counted here;
// Joined (a cooperative launch of several tiles): its histogram goes to published[tile * E + e] and every block
// sums the tiles' columns after the grid's barrier (a template flag: the barrier costs the other launches 16
// registers). Shared memory: route_shared_bytes(E).
template <typename Id, bool Joined>
__global__ void __launch_bounds__(kRouteThreads) route_kernel(const Id* __restrict__ ids, int64_t n,
                                                              MoeRouteShape shape, int64_t chunks,
                                                              int64_t chunks_per_tile,
                                                              const int* __restrict__ tile_before,
                                                              const int* __restrict__ tile_total,
                                                              int* __restrict__ published,
                                                              int64_t* __restrict__ counts,
                                                              int64_t* __restrict__ offsets,
                                                              int64_t* __restrict__ slots,
                                                              int64_t* __restrict__ token_ids,
                                                              int64_t* __restrict__ num_dropped) {
  __shared__ typename RouteScan::TempStorage scan_temp;
  __shared__ typename ChunkScan::TempStorage chunk_scan_temp;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int64_t experts = shape.num_experts;
  long long* row_base = reinterpret_cast<long long*>(shared_bytes);  // row of each expert's next pair in the tile
  int* limit = reinterpret_cast<int*>(row_base + experts);  // pairs of each expert the tile may still place
  int* chunk_start = limit + experts;  // [E + 1] first position of each expert in the chunk's expert order
  uint16_t* warp_hist = reinterpret_cast<uint16_t*>(chunk_start + experts + 1);  // [warp][expert]
  uint32_t* staged_token = reinterpret_cast<uint32_t*>(warp_hist + kRouteWarps * experts);  // [kChunk]
  uint16_t* staged_expert = reinterpret_cast<uint16_t*>(staged_token + kChunk);             // [kChunk]
  int* total = reinterpret_cast<int*>(warp_hist);  // aliases warp_hist until the chunk loop: pairs per expert
  int* before = total + experts;                   // ... and pairs per expert in earlier tiles
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int64_t first_chunk = int64_t(blockIdx.x) * chunks_per_tile;
  const int64_t end_chunk = std::min(first_chunk + chunks_per_tile, chunks);

  uint32_t keys[kItems];
  load_keys(ids, n, first_chunk, experts, keys, &shape.expert_ids_check);  // in flight while counts are gathered
  for (int64_t e = threadIdx.x; e < experts; e += kRouteThreads) total[e] = before[e] = 0;
  __syncthreads();
  if (tile_before == nullptr) {
    count_keys(keys, experts, total);
    for (int64_t chunk = first_chunk + 1; chunk < end_chunk; ++chunk) {
      uint32_t more[kItems];
      load_keys(ids, n, chunk, experts, more);
      count_keys(more, experts, total);
    }
    if constexpr (Joined) {  // every tile's histogram, then this tile's view of them
      __syncthreads();
      for (int64_t e = threadIdx.x; e < experts; e += kRouteThreads) published[blockIdx.x * experts + e] = total[e];
      cooperative_groups::this_grid().sync();
      for (int64_t e = threadIdx.x; e < experts; e += kRouteThreads) {
        int sum = 0, earlier = 0;
        for (int64_t t = 0; t < gridDim.x; ++t) {
          const int c = published[t * experts + e];
          sum += c;
          earlier += t < blockIdx.x ? c : 0;
        }
        total[e] = sum;  // each thread rewrites only its own experts
        before[e] = earlier;
      }
    }
  } else {
    for (int64_t e = threadIdx.x; e < experts; e += kRouteThreads) {
      total[e] = tile_total[e];
      before[e] = tile_before[blockIdx.x * experts + e];
    }
  }
  __syncthreads();

  // Kept pairs per expert (capacity), padded exclusive scan -> offsets; this tile's first row per expert.
  const long long capacity = shape.capacity < 0 ? LLONG_MAX : shape.capacity, pad = shape.pad_to;
  long long padded_base = 0, kept_base = 0;
  for (int64_t e0 = 0; e0 < experts; e0 += kRouteThreads) {
    const int64_t e = e0 + threadIdx.x;
    const long long kept = e < experts ? min((long long)total[e], capacity) : 0;
    const long long padded = round_up(kept, pad);
    long long padded_before, padded_sum, kept_before, kept_sum;
    RouteScan(scan_temp).ExclusiveSum(padded, padded_before, padded_sum);
    __syncthreads();
    RouteScan(scan_temp).ExclusiveSum(kept, kept_before, kept_sum);
    __syncthreads();
    if (e < experts) {
      const long long offset = padded_base + padded_before;
      row_base[e] = offset + before[e];
      limit[e] = int(kept - before[e]);  // both in [0, n], n < 2^31
      if (blockIdx.x == 0) {
        counts[e] = kept;
        offsets[e] = offset;
      }
    }
    padded_base += padded_sum;
    kept_base += kept_sum;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    offsets[experts] = padded_base;
    num_dropped[0] = n - kept_base;
  }
  __syncthreads();
  // Token id -1 on padding rows: each expert's [offset + kept, offset + padded) (a warp per expert, experts
  // shared out over the grid) and the unused tail [offsets[E], R).
  for (int64_t e = int64_t(blockIdx.x) * kRouteWarps + warp; pad > 1 && e < experts;
       e += int64_t(gridDim.x) * kRouteWarps) {  // pad 1: no padding rows
    const long long offset = row_base[e] - before[e], kept = limit[e] + before[e];
    const long long end = min(offset + round_up(kept, pad), (long long)shape.rows);
    for (long long row = offset + kept + lane; row < end; row += kWarpSize) token_ids[row] = -1;
  }
  for (long long row = padded_base + int64_t(blockIdx.x) * kRouteThreads + threadIdx.x; row < shape.rows;
       row += int64_t(gridDim.x) * kRouteThreads) {
    token_ids[row] = -1;
  }
  __syncthreads();  // total/before (warp_hist's memory) were read above

  const unsigned lanes_below = (1u << lane) - 1u;
  const int label_bits = 32 - __clz(int(experts));  // labels 0..E (E: a pair no expert counts)
  uint16_t* my_hist = warp_hist + warp * experts;
  const uint32_t k = uint32_t(shape.k);
  for (int64_t chunk = first_chunk; chunk < end_chunk; ++chunk) {
    if (chunk != first_chunk) load_keys(ids, n, chunk, experts, keys, &shape.expert_ids_check);
    for (int64_t i = threadIdx.x; i < kRouteWarps * experts / 2; i += kRouteThreads) {
      reinterpret_cast<uint32_t*>(warp_hist)[i] = 0u;  // kRouteWarps * experts is even
    }
    __syncthreads();
    // Rank of each pair among the earlier pairs of its warp's span with the same expert (flat order).
    int rank[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const uint32_t key = keys[i];
      const bool counted = int64_t(key) < experts;
      const unsigned peers = warp::match_bits(counted ? key : uint32_t(experts), label_bits);
      const int seen = counted ? my_hist[key] : 0;
      __syncwarp();
      if (counted && lane == __ffs(peers) - 1) my_hist[key] = uint16_t(seen + __popc(peers));
      __syncwarp();
      rank[i] = seen + __popc(peers & lanes_below);
    }
    __syncthreads();
    // Per-warp counts -> pairs of each expert in earlier warps' spans of the chunk (warps in order), and the
    // chunk's pairs in expert order: expert e's start there (an exclusive scan over experts).
    int chunk_carry = 0;
    for (int64_t e0 = 0; e0 < experts; e0 += kRouteThreads) {  // block-uniform
      const int64_t e = e0 + threadIdx.x;
      int run = 0;
      if (e < experts) {
        for (int w = 0; w < kRouteWarps; ++w) {
          const int c = warp_hist[w * experts + e];
          warp_hist[w * experts + e] = uint16_t(run);
          run += c;
        }
      }
      int run_before, run_sum;
      ChunkScan(chunk_scan_temp).ExclusiveSum(run, run_before, run_sum);
      __syncthreads();
      if (e < experts) chunk_start[e] = chunk_carry + run_before;
      chunk_carry += run_sum;
    }
    if (threadIdx.x == 0) chunk_start[experts] = chunk_carry;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t pair = pair_of(chunk, i);
      const uint32_t key = keys[i];
      if (int64_t(key) < experts) {
        const int local = my_hist[key] + rank[i];
        const bool kept = local < limit[key] && row_base[key] + local < shape.rows;
        slots[pair] = kept ? row_base[key] + local : -1;
        // token_ids is written below from the chunk's expert order: consecutive rows, coalesced stores
        // (written from here, a warp's 32 scattered rows cost the block most of its time).
        const int position = chunk_start[key] + local;
        staged_token[position] = uint32_t(pair) / k;
        staged_expert[position] = uint16_t(key);
      } else if (key != kNoPair) {
        slots[pair] = -1;  // expert id outside [0, E): dropped
      }
    }
    __syncthreads();
    for (int position = threadIdx.x; position < chunk_carry; position += kRouteThreads) {
      const int e = staged_expert[position];
      const int local = position - chunk_start[e];
      if (local < limit[e] && row_base[e] + local < shape.rows) token_ids[row_base[e] + local] = staged_token[position];
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < experts; e += kRouteThreads) {
      const int count = chunk_start[e + 1] - chunk_start[e];
      row_base[e] += count;
      limit[e] -= count;
    }
    // The next chunk's first __syncthreads orders these updates before their use.
  }
}

}  // namespace

template <typename Id>
void route_fast(const Id* ids, int64_t n, MoeRouteShape shape, int64_t* counts, int64_t* offsets, int64_t* slots,
                int64_t* token_ids, int64_t* num_dropped, Workspace& workspace, cudaStream_t stream) {
  const int64_t experts = shape.num_experts;
  const TilePlan plan = plan_tiles(n, experts);
  const size_t shared = route_shared_bytes(experts);
  int *tile_before = nullptr, *tile_total = nullptr;
  // A cooperative launch needs every block resident at once: at most one block per SM is always possible.
  if (plan.tiles > 1 && plan.tiles <= kMaxJoinedTiles && plan.tiles <= current_device_info().sm_count) {
    auto* published = static_cast<int*>(workspace.allocate(sizeof(int) * plan.tiles * experts));
    int64_t chunks = plan.chunks, per_tile = plan.chunks_per_tile;
    void* args[] = {(void*)&ids, &n,          &shape,  &chunks, &per_tile,  &tile_before, &tile_total,
                    &published,  &counts,     &offsets, &slots, &token_ids, &num_dropped};
    GPUPRIM_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&route_kernel<Id, true>),
                                                   dim3(unsigned(plan.tiles)), dim3(kRouteThreads), args, shared,
                                                   stream));
    return;
  }
  if (plan.tiles > 1) {
    // One allocation for the three arrays (each allocation is host time in a small MoE step).
    auto* tile_counts = static_cast<int*>(workspace.allocate(sizeof(int) * (2 * plan.tiles + 1) * experts));
    tile_before = tile_counts + plan.tiles * experts;
    tile_total = tile_before + plan.tiles * experts;
    count_kernel<Id><<<unsigned(plan.tiles), kRouteThreads, sizeof(int) * experts, stream>>>(
        ids, n, experts, plan.chunks, plan.chunks_per_tile, tile_counts);
    GPUPRIM_LAUNCH_CHECK();
    prefix_kernel<<<unsigned(experts), kRouteThreads, 0, stream>>>(tile_counts, plan.tiles, experts, tile_before,
                                                                   tile_total);
    GPUPRIM_LAUNCH_CHECK();
  }
  route_kernel<Id, false><<<unsigned(plan.tiles), kRouteThreads, shared, stream>>>(
      ids, n, shape, plan.chunks, plan.chunks_per_tile, tile_before, tile_total, nullptr, counts, offsets, slots,
      token_ids, num_dropped);
  GPUPRIM_LAUNCH_CHECK();
}

template void route_fast<int64_t>(const int64_t*, int64_t, MoeRouteShape, int64_t*, int64_t*, int64_t*, int64_t*,
                                  int64_t*, Workspace&, cudaStream_t);
template void route_fast<uint32_t>(const uint32_t*, int64_t, MoeRouteShape, int64_t*, int64_t*, int64_t*, int64_t*,
                                   int64_t*, Workspace&, cudaStream_t);

}  // namespace moe
}  // namespace gpuprim
