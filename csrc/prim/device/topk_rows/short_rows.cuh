// Top-k of short rows (n <= 512, 1-, 2- or 4-byte elements): a group of G lanes per row (G a power
// of two, 2..32, 16 items per lane, 32 / G rows per warp). Shared by the row top-k (topk_rows.cu) and the
// fused gpuprim::topk_gating kernel.
//   Each element becomes a 32-bit rank word: its order-preserving key (the key codec's KeyEncoder)
//   in the high bits, its inverted position in the low bits (`position_mask`), so "larger word
//   wins" means larger key, and among equal keys the lower position (the tie contract), in one
//   32-bit compare. Words are unique within a row; 0 is the empty slot (2^P > n, so ~position's low
//   P bits are never all zero). 1- and 2-byte keys fit whole beside 16 position bits: exact. A
//   4-byte key gives its low P = bit_width(n) bits to the position, so words whose keys agree in
//   the high 32 - P bits are ordered by position only. The rounds therefore also take rank k and
//   check that no two neighbours among ranks 0..k share their high bits: then each of ranks
//   0..k-1 is the only word of the row with its high bits (equal high bits are neighbours in word
//   order), so word order is key order on them, and every other element has smaller high bits,
//   hence a smaller key, than rank k-1. A warp where some row fails the check (two of the best
//   k + 1 values agree in their top 22-25 bits, or are equal) redoes its rows with full keys
//   (exact_rounds: rare on real data, slower, few registers).
//   Lane g of a group holds the 16-byte vectors v * G + g of the row (a group's lanes read G
//   consecutive vectors per load: coalesced), keeps its best kList words sorted in registers (a
//   sorting network, or insertion for kList <= 3), then each round a log2(G)-level butterfly max
//   over the lanes' heads names the next best word, and the lane holding it drops its head.
// Why 32-bit words: a compare-exchange is two integer min/max instructions (64-bit composites of
// key and position took about six), and a round shuffles one register instead of two.
// The kernels are latency-bound on each warp's chain of instructions (ncu: docs/experiments/topk.md), so
// instructions per row are what count: fp32 rows of exactly G * 16 elements get kernels without
// per-element masks (kFull, full_rows()).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "prim/device/topk_rows/tuning_topk_rows.h"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"
#include "prim/util/launch.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace short_rows {

constexpr int kItems = topk_rows::Tuning::kShortItems;  // items per lane
constexpr int kMaxRow = kWarpSize * kItems;               // 512: the longest row a warp-wide group takes
constexpr int kRowsThreads = topk_rows::Tuning::kShortThreads;
constexpr int kRowsMinBlocks = topk_rows::Tuning::kShortMinBlocks;  // blocks an SM the kernels are built for

// Whether rank words hold the whole key (1- and 2-byte elements): no check, no exact redo.
template <typename Bits>
constexpr bool kExactWords = sizeof(Bits) <= 2;

// Low bits of a rank word that hold ~position: 16 for 1- and 2-byte keys, else the fewest P with
// 2^P > n (so that no real word is 0).
template <typename Bits>
inline uint32_t position_mask(int64_t n) {
  if (kExactWords<Bits>) return 0xFFFFu;
  return (uint32_t(1) << bits_to_hold(uint64_t(n))) - 1;
}

// Lanes per row for rows of n elements: the smallest power of two >= 2 with G * 16 >= n.
inline int group_size(int64_t n) {
  int g = 2;
  while (int64_t(g) * kItems < n) g *= 2;
  return g;
}
// Calls f(std::integral_constant<int, group_size(n)>{}) (n <= kMaxRow).
template <typename F>
void with_group_size(int64_t n, F&& f) {
  dispatch_pow2<2, kWarpSize>((n + kItems - 1) / kItems, f);
}

// Words kept per lane for k picks: exact words need k (a lane can win at most k rounds), checked
// ones k + 1 (rank k is looked at too); at most the 16 items a lane has. One of 2, 4, 8, 16
// (exact) or 2, 3, 5, 9, 16 (checked).
template <typename Bits>
inline int list_size(int64_t k) {
  if (kExactWords<Bits>) return k <= 2 ? 2 : (k <= 4 ? 4 : (k <= 8 ? 8 : kItems));
  return k <= 1 ? 2 : (k <= 2 ? 3 : (k <= 4 ? 5 : (k <= 8 ? 9 : kItems)));
}

// The largest k a list of kList words serves (kList < kItems; a full list serves any k).
template <typename Bits>
constexpr int list_max_k(int list) {
  return kExactWords<Bits> ? list : list - 1;
}

// Position (in the row) of item i of lane g: 16-byte vector i / kVec of the lane is vector
// (i / kVec) * G + g of the row.
template <typename Bits, int kGroup>
__device__ __forceinline__ int item_position(int g, int i) {
  constexpr int kVec = 16 / int(sizeof(Bits));
  return ((i / kVec) * kGroup + g) * kVec + i % kVec;
}

// This lane's 16 elements of a row (nothing when !active) and whether each is in the row (`keep`:
// all ones or 0, for masks: a bool would cost a branch per element). Vectors
// of 16 bytes when `vector_loads` (the row starts 16-byte aligned and n * sizeof(Bits) is a
// multiple of 16, so a vector is wholly inside the row or wholly past it); else element loads at
// the same positions.
// kFull (full rows: n == kGroup * 16, vector loads, row_in readable for inactive lanes too): every
// item is inside, no per-item masks (they were a fifth of the kernel's instructions on such rows).
template <typename Bits, int kGroup, bool kFull = false>
__device__ __forceinline__ void load_lane(const Bits* __restrict__ row_in, int n, bool active, bool vector_loads,
                                          int g, Bits (&raw)[kItems], uint32_t (&keep)[kItems]) {
  constexpr int kVec = 16 / int(sizeof(Bits));  // elements per 16-byte vector
  constexpr int kVectors = kItems / kVec;        // vectors per lane
  static_assert(kItems % kVec == 0, "whole vectors per lane");
  if (kFull || vector_loads) {
    const uint4* vectors = reinterpret_cast<const uint4*>(row_in);
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      uint4 word4 = make_uint4(0, 0, 0, 0);
      const bool inside = kFull || (active && item_position<Bits, kGroup>(g, v * kVec) < n);
      if (inside) word4 = vectors[v * kGroup + g];
      const uint32_t words[4] = {word4.x, word4.y, word4.z, word4.w};
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        constexpr int kPerWord = 4 / int(sizeof(Bits));
        raw[v * kVec + e] = Bits(words[e / kPerWord] >> (8 * int(sizeof(Bits)) * (e % kPerWord)));
        keep[v * kVec + e] = inside ? ~0u : 0u;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int position = item_position<Bits, kGroup>(g, i);
      const bool inside = active && position < n;
      raw[i] = inside ? row_in[position] : Bits(0);
      keep[i] = inside ? ~0u : 0u;
    }
  }
}

template <typename Bits>
__device__ __forceinline__ uint32_t rank_word(uint32_t key, int position, uint32_t position_mask) {
  const uint32_t high = key << (32 - 8 * int(sizeof(Bits)));  // the key at the top
  return (high & ~position_mask) | (~uint32_t(position) & position_mask);
}

__device__ __forceinline__ int word_position(uint32_t word, uint32_t position_mask) {
  return int(~word & position_mask);
}

__device__ __forceinline__ void compare_exchange(uint32_t& a, uint32_t& b) {  // a gets the larger
  const uint32_t hi = max(a, b);
  const uint32_t lo = min(a, b);
  a = hi;
  b = lo;
}

// Sorts the 16 words descending: Batcher's odd-even merge sort, 63 exchanges in 10 layers (p, d);
// in a layer, element a is exchanged with a + d when a is in the first half of a 2d-block (counted
// from d % p) and both lie in one 2p-block. Fixed trip counts: fully unrolled, every index a
// constant (registers, no local memory); exchanges that only feed entries past the ones the
// caller uses are removed as dead code.
__device__ __forceinline__ void sort_descending(uint32_t (&items)[kItems]) {
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

// This lane's part of a row: loads its items, makes their rank words and leaves its best kList
// words, best first, in `list` (empty slots 0).
// kFull: full rows of float keys (see load_lane), encoded without asking the codec's kind per element.
template <typename Bits, int kGroup, int kList, bool kFull = false>
__device__ __forceinline__ void load_lane_list(const Bits* __restrict__ row_in, int n, bool active, bool vector_loads,
                                               int g, KeyCodec<Bits> codec, uint32_t position_mask,
                                               uint32_t (&list)[kList]) {
  static_assert(!kFull || sizeof(Bits) == 4, "full rows: fp32 keys");
  Bits raw[kItems];
  uint32_t keep[kItems];
  load_lane<Bits, kGroup, kFull>(row_in, n, active, vector_loads, g, raw, keep);
  const KeyEncoder<Bits> encode = KeyEncoder<Bits>(codec).template known_float<kFull>();
  uint32_t words[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    words[i] = rank_word<Bits>(encode(raw[i]), item_position<Bits, kGroup>(g, i), position_mask) & keep[i];
  }
  if constexpr (kList <= 3) {
    // Few picks: insert each item into a sorted list of kList (kList exchanges an item).
#pragma unroll
    for (int s = 0; s < kList; ++s) list[s] = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      uint32_t c = words[i];
#pragma unroll
      for (int s = 0; s < kList; ++s) compare_exchange(list[s], c);
    }
  } else {
    sort_descending(words);
#pragma unroll
    for (int s = 0; s < kList; ++s) list[s] = words[s];
  }
}

// The selection rounds of a row, best first. Once the ranks first .. first + kGroup - 1 below k
// are known, calls emit(first, position) (first < k): lane g's rank is first + g, position -1
// when that rank is >= k.
// kCheck (4-byte keys): one more round looks at rank k; returns whether two neighbours among
// ranks 0..k share their high bits (the row must be redone exactly; meaningless for inactive
// rows). kList < kItems: rounds <= kList (list_size), all unrolled, and a round keeps only the
// entries a later round can still reach. Every lane of the warp calls it (bounds uniform).
template <int kGroup, int kList, bool kCheck, typename Emit>
__device__ __forceinline__ bool select_rounds(uint32_t (&list)[kList], int k, int g, uint32_t position_mask,
                                              Emit&& emit) {
  const int rounds = kCheck ? k + 1 : k;
  uint32_t mine = 0;      // the word of lane g's rank in the current chunk
  uint32_t previous = 0;  // the last round's best
  bool tied = false;
  // One round; entries [0, live) of the list are kept current (later ones are never read again).
  const auto round_step = [&](int round, int live) {
    const uint32_t best = warp::group_max<kGroup>(list[0]);
    const bool drop = list[0] == best;  // the lane that held it (words are unique)
#pragma unroll
    for (int s = 0; s < kList; ++s) {
      if (s < live) list[s] = drop ? (s + 1 < kList ? list[s + 1] : 0u) : list[s];
    }
    if (kCheck && round > 0 && round < rounds) tied = tied || ((best ^ previous) <= position_mask);
    previous = best;
    if (g == round % kGroup) mine = best;
  };
  const auto position_of_rank = [&](int first) {
    return first + g < k ? word_position(mine, position_mask) : -1;
  };
  if constexpr (kList < kItems) {
    // All kList rounds, unguarded (a branch per round costs more than the rounds past `rounds`,
    // whose picks are never emitted nor checked).
#pragma unroll
    for (int round = 0; round < kList; ++round) {
      round_step(round, kList - 1 - round);
      const int first = round - round % kGroup;
      if ((round % kGroup == kGroup - 1 || round == kList - 1) && first < k) emit(first, position_of_rank(first));
    }
  } else {
    for (int first = 0; first < rounds; first += kGroup) {
#pragma unroll
      for (int r = 0; r < kGroup; ++r) {
        if (first + r < rounds) round_step(first + r, kList);  // uniform
      }
      if (first < k) emit(first, position_of_rank(first));
    }
  }
  return tied;
}

// The exact selection (4-byte keys whose rank words tied): the lane reloads its 16 elements and
// keeps their full keys; each of k rounds takes every lane's best remaining item (largest key,
// lowest position among equals: items are in position order) and a butterfly over the group picks
// the best (key, lower position). Emits like select_rounds. Every lane of the warp calls it.
template <typename Bits, int kGroup, typename Emit>
__device__ __forceinline__ void exact_rounds(const Bits* __restrict__ row_in, int n, int k, bool active,
                                             bool vector_loads, int g, KeyCodec<Bits> codec, Emit&& emit) {
  constexpr int kNone = 0x7FFFFFFF;  // the position of "no item": loses every tie
  Bits raw[kItems];
  uint32_t keep[kItems];
  load_lane<Bits, kGroup>(row_in, n, active, vector_loads, g, raw, keep);
  const KeyEncoder<Bits> encode(codec);
  uint32_t keys[kItems];
  uint32_t alive = 0;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    keys[i] = encode(raw[i]);
    alive |= keep[i] & (1u << i);
  }
  int mine = -1;
  for (int first = 0; first < k; first += kGroup) {
#pragma unroll
    for (int r = 0; r < kGroup; ++r) {
      if (first + r < k) {  // uniform
        uint32_t key = 0;
        int item = -1;
#pragma unroll
        for (int i = kItems - 1; i >= 0; --i) {  // downwards with >=: the lowest item among equal keys
          if (((alive >> i) & 1u) && keys[i] >= key) {
            key = keys[i];
            item = i;
          }
        }
        const int position = item >= 0 ? item_position<Bits, kGroup>(g, item) : kNone;
        uint32_t best_key = key;
        int best_position = position;
#pragma unroll
        for (int offset = kGroup / 2; offset >= 1; offset /= 2) {
          const uint32_t other_key = __shfl_xor_sync(kFullMask, best_key, offset);
          const int other_position = __shfl_xor_sync(kFullMask, best_position, offset);
          if (other_key > best_key || (other_key == best_key && other_position < best_position)) {
            best_key = other_key;
            best_position = other_position;
          }
        }
        if (position == best_position && item >= 0) alive &= ~(1u << item);
        if (g == r) mine = best_position;
      }
    }
    emit(first, first + g < k ? mine : -1);
  }
}

// Selects a row's best k (every lane of the warp calls it; bounds uniform): emit(first, position)
// as select_rounds, then, for 4-byte keys in a warp where some active row tied, again with the
// exact ranks (the later emits are the answer).
template <typename Bits, int kGroup, int kList, bool kFull = false, typename Emit>
__device__ __forceinline__ void select_row(const Bits* __restrict__ row_in, int n, int k, bool active,
                                           bool vector_loads, int g, KeyCodec<Bits> codec,
                                           uint32_t position_mask, Emit&& emit) {
  bool tied;
  {
    uint32_t list[kList];
    load_lane_list<Bits, kGroup, kList, kFull>(row_in, n, active, vector_loads, g, codec, position_mask, list);
    tied = select_rounds<kGroup, kList, !kExactWords<Bits>>(list, k, g, position_mask, emit);
  }
  if constexpr (!kExactWords<Bits>) {
    if (__any_sync(kFullMask, active && tied)) {
      exact_rounds<Bits, kGroup>(row_in, n, k, active, vector_loads, g, codec, emit);
    }
  }
}

// gpuprim::topk rows (k <= n <= kGroup * 16, k <= 64): values and int64 indices best first. Each
// warp takes 32 / kGroup consecutive rows at a time (loop bounds uniform across the warp).
// Results leave in chunks of kGroup ranks, lane g writing rank first + g: coalesced stores; the
// value is the row's element (its exact bits: NaN payloads, the sign of zero).
template <typename Bits, int kGroup, int kList, bool kFull>
__global__ void __launch_bounds__(kRowsThreads, kRowsMinBlocks)
    topk_rows_kernel(const Bits* __restrict__ x, int64_t rows, int n, int k, bool vector_loads,
                     KeyCodec<Bits> codec, uint32_t position_mask, Bits* __restrict__ values,
                     int64_t* __restrict__ indices) {
  constexpr int kRowsPerWarp = 32 / kGroup;
  const int lane = int(threadIdx.x) % 32;
  const int g = lane % kGroup;
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t first_row = warp * kRowsPerWarp; first_row < rows; first_row += warps * kRowsPerWarp) {
    const int64_t row = first_row + lane / kGroup;
    const bool active = row < rows;
    const Bits* row_in = x + (active ? row : 0) * n;
    select_row<Bits, kGroup, kList, kFull>(row_in, n, k, active, vector_loads, g, codec, position_mask,
                                           [&](int first, int position) {
                                             if (active && position >= 0) {
                                               values[row * k + first + g] = row_in[position];
                                               indices[row * k + first + g] = int64_t(position);
                                             }
                                           });
  }
}

// Blocks for `rows` rows of kGroup lanes each (grid-stride beyond Tuning::kShortBlocksPerSm blocks per SM).
template <int kGroup>
unsigned rows_grid(int64_t rows, int sm_count) {
  return grid_for(rows, kRowsThreads / kGroup, int64_t(sm_count) * topk_rows::Tuning::kShortBlocksPerSm);
}

// Whether every row of x starts 16-byte aligned and holds whole 16-byte vectors.
template <typename Bits>
bool vector_loads_ok(const Bits* x, int64_t n) {
  return reinterpret_cast<uintptr_t>(x) % 16 == 0 && (n * int64_t(sizeof(Bits))) % 16 == 0;
}

// Whether rows of n take the kFull kernels (load_lane): fp32 keys, n == kGroup * 16, vector loads.
template <typename Bits, int kGroup>
bool full_rows(const Bits* x, int64_t n, const KeyCodec<Bits>& codec) {
  return sizeof(Bits) == 4 && codec.kind == KeyKind::kFloat && n == int64_t(kGroup) * kItems &&
         vector_loads_ok(x, n);
}

template <typename Bits, int kGroup, int kList>
void launch_topk_rows(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec,
                      Bits* values, int64_t* indices, int sm_count, cudaStream_t stream) {
  const unsigned grid = rows_grid<kGroup>(rows, sm_count);
  if constexpr (sizeof(Bits) == 4) {
    if (full_rows<Bits, kGroup>(x, n, codec)) {
      topk_rows_kernel<Bits, kGroup, kList, true><<<grid, kRowsThreads, 0, stream>>>(
          x, rows, int(n), int(k), true, codec, position_mask<Bits>(n), values, indices);
      return;
    }
  }
  topk_rows_kernel<Bits, kGroup, kList, false><<<grid, kRowsThreads, 0, stream>>>(
      x, rows, int(n), int(k), vector_loads_ok(x, n), codec, position_mask<Bits>(n), values, indices);
}

template <typename Bits, int kGroup>
void launch_topk_rows_list(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec,
                           Bits* values, int64_t* indices, int sm_count, cudaStream_t stream) {
  if constexpr (kExactWords<Bits>) {
    switch (list_size<Bits>(k)) {
      case 2: return launch_topk_rows<Bits, kGroup, 2>(x, rows, n, k, codec, values, indices, sm_count, stream);
      case 4: return launch_topk_rows<Bits, kGroup, 4>(x, rows, n, k, codec, values, indices, sm_count, stream);
      case 8: return launch_topk_rows<Bits, kGroup, 8>(x, rows, n, k, codec, values, indices, sm_count, stream);
      default: return launch_topk_rows<Bits, kGroup, kItems>(x, rows, n, k, codec, values, indices, sm_count, stream);
    }
  } else {
    switch (list_size<Bits>(k)) {
      case 2: return launch_topk_rows<Bits, kGroup, 2>(x, rows, n, k, codec, values, indices, sm_count, stream);
      case 3: return launch_topk_rows<Bits, kGroup, 3>(x, rows, n, k, codec, values, indices, sm_count, stream);
      case 5: return launch_topk_rows<Bits, kGroup, 5>(x, rows, n, k, codec, values, indices, sm_count, stream);
      case 9: return launch_topk_rows<Bits, kGroup, 9>(x, rows, n, k, codec, values, indices, sm_count, stream);
      default: return launch_topk_rows<Bits, kGroup, kItems>(x, rows, n, k, codec, values, indices, sm_count, stream);
    }
  }
}

// gpuprim::topk of rows with 1 <= k <= n <= 512, k <= 64, 1-, 2- or 4-byte elements (the caller
// checks; the caller checks the launch too). Values best first, ties to the lower position.
template <typename Bits>
void topk_short_rows(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec,
                     Bits* values, int64_t* indices, int sm_count, cudaStream_t stream) {
  static_assert(sizeof(Bits) <= 4, "8-byte elements take the warp path (warp_rows.cuh)");
  with_group_size(n, [&](auto group) {
    launch_topk_rows_list<Bits, decltype(group)::value>(x, rows, n, k, codec, values, indices, sm_count, stream);
  });
}

}  // namespace short_rows
}  // namespace gpuprim
