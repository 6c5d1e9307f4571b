// Top-k of short rows (n <= 512, 1-, 2- or 4-byte elements): a group of G lanes per row (G a power
// of two, 2..32, 16 items per lane, 32 / G rows per warp). Shared by gpuprim::topk and the fused
// gpuprim::topk_gating kernel.
//   Each element becomes a composite key: the order-preserving key (prim/radix_sort.cuh's codec) in
//   the high bits and the bitwise-inverted position in the low bits, so "larger composite wins"
//   means larger key, and among equal keys the lower position: the tie contract as one unsigned
//   comparison. Composites are unique within a row (a total order), so results are deterministic.
//   0 is the empty slot: a real element's low bits (~position) are never all zero.
//   Lane g of a group holds the 16-byte vectors v * G + g of the row (a group's lanes read G
//   consecutive vectors per load: coalesced), sorts its 16 composites in registers (a sorting
//   network, fully unrolled) and keeps the best kList; then k rounds of a log2(G)-level butterfly
//   max over the lanes' heads name the next best, and the lane holding it drops its head.
// Why: one warp per row spent k rounds of a 5-level argmax (2 shuffles a level) on 1-16 items a
// lane; here a row costs G * 16 items of register sorting and k * log2(G) levels.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "prim/radix_sort.cuh"

namespace gpuprim {
namespace short_rows {

constexpr int kItems = 16;             // items per lane
constexpr int kMaxRow = 32 * kItems;   // 512: the longest row a warp-wide group takes
constexpr int kRowsThreads = 256;      // threads per block
constexpr unsigned kFullMask = 0xFFFFFFFFu;

// Composite keys: 16 key bits + 16 position bits for 1- and 2-byte elements, else 32 + 32.
template <typename Bits>
using Composite = std::conditional_t<sizeof(Bits) <= 2, uint32_t, unsigned long long>;
template <typename Bits>
constexpr int kPositionBits = sizeof(Bits) <= 2 ? 16 : 32;

template <typename Bits>
__device__ __forceinline__ Composite<Bits> make_composite(Bits key, int position) {
  using C = Composite<Bits>;
  constexpr C kLowMask = (C(1) << kPositionBits<Bits>) - 1;
  return (C(key) << kPositionBits<Bits>) | (C(~uint32_t(position)) & kLowMask);
}

template <typename Bits>
__device__ __forceinline__ int composite_position(Composite<Bits> c) {
  using C = Composite<Bits>;
  constexpr C kLowMask = (C(1) << kPositionBits<Bits>) - 1;
  return int(~uint32_t(c & kLowMask) & uint32_t(kLowMask));
}

template <typename Bits>
__device__ __forceinline__ Bits composite_key(Composite<Bits> c) {
  return Bits(c >> kPositionBits<Bits>);
}

// Lanes per row for rows of n elements: the smallest power of two >= 2 with G * 16 >= n.
inline int group_size(int64_t n) {
  int g = 2;
  while (int64_t(g) * kItems < n) g *= 2;
  return g;
}

// Composites kept per lane: enough for k picks (a lane can win at most k rounds).
inline int list_size(int64_t k) {
  int l = 2;
  while (l < k && l < kItems) l *= 2;
  return l;
}

template <typename C>
__device__ __forceinline__ void compare_exchange(C& a, C& b) {  // a gets the larger
  const C hi = a > b ? a : b;
  const C lo = a > b ? b : a;
  a = hi;
  b = lo;
}

// Sorts the 16 composites descending: Batcher's odd-even merge sort, 63 exchanges in 10 layers
// (p, d); in a layer, element a is exchanged with a + d when a is in the first half of a 2d-block
// (counted from d % p) and both lie in one 2p-block. Fixed trip counts: fully unrolled, every index
// a constant (registers, no local memory); exchanges that only feed entries past the ones the
// caller uses are removed as dead code.
template <typename C>
__device__ __forceinline__ void sort_descending(C (&items)[kItems]) {
  static_assert(kItems == 16, "four merge levels");
#pragma unroll
  for (int p_log = 0; p_log < 4; ++p_log) {
#pragma unroll
    for (int d_log = 3; d_log >= 0; --d_log) {
      const int p = 1 << p_log, d = 1 << d_log, first = d % p;
      if (d > p) continue;
#pragma unroll
      for (int a = 0; a < kItems; ++a) {
        if (a >= first && (a - first) % (2 * d) < d && a + d < kItems && a / (2 * p) == (a + d) / (2 * p)) {
          compare_exchange(items[a], items[a + d]);
        }
      }
    }
  }
}

// This lane's part of a row: loads its items (nothing when !active), encodes them and leaves its
// best kList composites, best first, in `list` (empty slots 0). Vectors of 16 bytes when
// `vector_loads` (the row starts 16-byte aligned and n * sizeof(Bits) is a multiple of 16, so a
// vector is wholly inside the row or wholly past it); else element loads at the same positions.
template <typename Bits, int kGroup, int kList>
__device__ __forceinline__ void load_lane_list(const Bits* __restrict__ row_in, int n, bool active, bool vector_loads,
                                               int g, radix_sort::KeyCodec<Bits> codec,
                                               Composite<Bits> (&list)[kList]) {
  using C = Composite<Bits>;
  constexpr int kVec = 16 / int(sizeof(Bits));  // elements per 16-byte vector
  constexpr int kVectors = kItems / kVec;        // vectors per lane
  static_assert(kItems % kVec == 0, "whole vectors per lane");
  Bits raw[kItems];
  bool present[kItems];
  if (vector_loads) {
    const uint4* vectors = reinterpret_cast<const uint4*>(row_in);
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      const int first = ((v * kGroup) + g) * kVec;
      uint4 word4 = make_uint4(0, 0, 0, 0);
      const bool inside = active && first < n;
      if (inside) word4 = vectors[v * kGroup + g];
      const uint32_t words[4] = {word4.x, word4.y, word4.z, word4.w};
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        constexpr int kPerWord = 4 / int(sizeof(Bits));
        raw[v * kVec + e] = Bits(words[e / kPerWord] >> (8 * int(sizeof(Bits)) * (e % kPerWord)));
        present[v * kVec + e] = inside;
      }
    }
  } else {
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const int position = ((v * kGroup) + g) * kVec + e;
        const bool inside = active && position < n;
        raw[v * kVec + e] = inside ? row_in[position] : Bits(0);
        present[v * kVec + e] = inside;
      }
    }
  }
  C items[kItems];
#pragma unroll
  for (int v = 0; v < kVectors; ++v) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const int i = v * kVec + e;
      const int position = ((v * kGroup) + g) * kVec + e;
      items[i] = present[i] ? make_composite<Bits>(codec.encode(raw[i]), position) : C(0);
    }
  }
  if constexpr (kList <= 2) {
    // Few picks: insert each item into a sorted list of kList (kList exchanges an item).
#pragma unroll
    for (int s = 0; s < kList; ++s) list[s] = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      C c = items[i];
#pragma unroll
      for (int s = 0; s < kList; ++s) compare_exchange(list[s], c);
    }
  } else {
    sort_descending(items);
#pragma unroll
    for (int s = 0; s < kList; ++s) list[s] = items[s];
  }
}

// One round: every lane of the group returns the group's best head; the lane that held it drops
// it (the list shifts up by one, an empty slot enters at the end). Every lane of the warp calls it.
template <int kGroup, int kList, typename C>
__device__ __forceinline__ C pop_group_best(C (&list)[kList]) {
  C best = list[0];
#pragma unroll
  for (int offset = kGroup / 2; offset >= 1; offset /= 2) {
    const C other = __shfl_xor_sync(kFullMask, best, offset, kGroup);
    best = other > best ? other : best;
  }
  const bool mine = list[0] == best;  // unique (composites are distinct) unless the row is empty
#pragma unroll
  for (int s = 0; s + 1 < kList; ++s) list[s] = mine ? list[s + 1] : list[s];
  list[kList - 1] = mine ? C(0) : list[kList - 1];
  return best;
}

// gpuprim::topk rows (k <= n <= kGroup * 16, k <= 64): values and int64 indices best first. Each
// warp takes 32 / kGroup consecutive rows at a time (loop bounds uniform across the warp).
// Results leave in chunks of kGroup ranks, lane g writing rank chunk + g: coalesced stores.
template <typename Bits, int kGroup, int kList>
__global__ void __launch_bounds__(kRowsThreads)
    topk_rows_kernel(const Bits* __restrict__ x, int64_t rows, int n, int k, bool vector_loads,
                     radix_sort::KeyCodec<Bits> codec, Bits* __restrict__ values, int64_t* __restrict__ indices) {
  using C = Composite<Bits>;
  constexpr int kRowsPerWarp = 32 / kGroup;
  const int lane = int(threadIdx.x) % 32;
  const int g = lane % kGroup;
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t first_row = warp * kRowsPerWarp; first_row < rows; first_row += warps * kRowsPerWarp) {
    const int64_t row = first_row + lane / kGroup;
    const bool active = row < rows;
    const Bits* row_in = x + (active ? row : 0) * n;
    C list[kList];
    load_lane_list<Bits, kGroup, kList>(row_in, n, active, vector_loads, g, codec, list);
    for (int chunk = 0; chunk < k; chunk += kGroup) {
      C mine = 0;
#pragma unroll
      for (int r = 0; r < kGroup; ++r) {
        if (chunk + r < k) {  // uniform
          const C best = pop_group_best<kGroup>(list);
          if (g == r) mine = best;
        }
      }
      if (active && chunk + g < k) {
        const int position = composite_position<Bits>(mine);
        const Bits key = composite_key<Bits>(mine);
        // NaN payloads and the sign of zero are not in the key: those come from the row.
        const Bits value = codec.decodes_exactly(key) ? codec.decode(key) : row_in[position];
        values[row * k + chunk + g] = value;
        indices[row * k + chunk + g] = int64_t(position);
      }
    }
  }
}

// Blocks for `rows` rows of kGroup lanes each (grid-stride beyond 16 blocks per SM).
template <int kGroup>
unsigned rows_grid(int64_t rows, int sm_count) {
  constexpr int64_t kRowsPerBlock = kRowsThreads / kGroup;
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const int64_t limit = int64_t(sm_count) * 16;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > limit ? limit : blocks));
}

// Whether every row of x starts 16-byte aligned and holds whole 16-byte vectors.
template <typename Bits>
bool vector_loads_ok(const Bits* x, int64_t n) {
  return reinterpret_cast<uintptr_t>(x) % 16 == 0 && (n * int64_t(sizeof(Bits))) % 16 == 0;
}

template <typename Bits, int kGroup, int kList>
void launch_topk_rows(const Bits* x, int64_t rows, int64_t n, int64_t k, radix_sort::KeyCodec<Bits> codec,
                      Bits* values, int64_t* indices, int sm_count, cudaStream_t stream) {
  topk_rows_kernel<Bits, kGroup, kList><<<rows_grid<kGroup>(rows, sm_count), kRowsThreads, 0, stream>>>(
      x, rows, int(n), int(k), vector_loads_ok(x, n), codec, values, indices);
}

template <typename Bits, int kGroup>
void launch_topk_rows_list(const Bits* x, int64_t rows, int64_t n, int64_t k, radix_sort::KeyCodec<Bits> codec,
                           Bits* values, int64_t* indices, int sm_count, cudaStream_t stream) {
  switch (list_size(k)) {
    case 2: return launch_topk_rows<Bits, kGroup, 2>(x, rows, n, k, codec, values, indices, sm_count, stream);
    case 4: return launch_topk_rows<Bits, kGroup, 4>(x, rows, n, k, codec, values, indices, sm_count, stream);
    case 8: return launch_topk_rows<Bits, kGroup, 8>(x, rows, n, k, codec, values, indices, sm_count, stream);
    default: return launch_topk_rows<Bits, kGroup, 16>(x, rows, n, k, codec, values, indices, sm_count, stream);
  }
}

// gpuprim::topk of rows with 1 <= k <= n <= 512, k <= 64, 1-, 2- or 4-byte elements (the caller
// checks; the caller checks the launch too). Values best first, ties to the lower position.
template <typename Bits>
void topk_short_rows(const Bits* x, int64_t rows, int64_t n, int64_t k, radix_sort::KeyCodec<Bits> codec,
                     Bits* values, int64_t* indices, int sm_count, cudaStream_t stream) {
  static_assert(sizeof(Bits) <= 4, "8-byte elements take the warp path");
  switch (group_size(n)) {
    case 2: return launch_topk_rows_list<Bits, 2>(x, rows, n, k, codec, values, indices, sm_count, stream);
    case 4: return launch_topk_rows_list<Bits, 4>(x, rows, n, k, codec, values, indices, sm_count, stream);
    case 8: return launch_topk_rows_list<Bits, 8>(x, rows, n, k, codec, values, indices, sm_count, stream);
    case 16: return launch_topk_rows_list<Bits, 16>(x, rows, n, k, codec, values, indices, sm_count, stream);
    default: return launch_topk_rows_list<Bits, 32>(x, rows, n, k, codec, values, indices, sm_count, stream);
  }
}

}  // namespace short_rows
}  // namespace gpuprim
