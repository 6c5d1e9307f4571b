// Decoupled look-back (Merrill & Garland) for single-pass scans over tiles, made deterministic.
//
// The classic look-back adds the aggregates it meets right to left and stops at the first inclusive
// prefix, so a float result depends on which predecessor happened to be done. Here every value is a
// fixed function of the data, in two levels:
//   - tiles form groups of 32; inside a group a tile's prefix is a fixed-order warp scan of the
//     earlier tiles' aggregates (each tile waits for the aggregates of its group's earlier tiles);
//   - a group's prefix comes from a look-back over groups whose values are folded left to right from
//     the nearest inclusive prefix: E(g) = ((I(j) + B(j+1)) + B(j+2)) + ... + B(g-1), I(g) = E(g) + B(g).
//     I(j) is the same left fold up to group j, so E(g) is the sequential fold of all earlier group
//     sums whichever j a run finds: bitwise identical run to run.
// The fold is sequential, but groups are 32 tiles, so the nearest inclusive prefix is only a few
// groups back (a round trip's worth of tiles, divided by 32). The last tile of a group publishes the
// group's sum (as soon as its group's aggregates are in) and then its inclusive prefix.
//
// A tile that sees no inclusive prefix in its window polls again rather than reaching further back
// (which would need the newer values kept for the fold): predecessors only ever wait for earlier
// tiles, so one of them publishes an inclusive prefix. Tiles are taken in increasing order so that
// every tile waited for is running or done: tile = block index, as CUB's scans do, relying on the
// hardware starting blocks in index order (faster than tiles claimed from an atomic counter).
//
// Polling: a tile sleeps before its first poll (first_poll_delay_ns, as CUB's fixed_delay_constructor
// does), so that fewer spinning loads compete with the streaming ones and its predecessors have
// published by then; only in grids of kDelayMinBlocks blocks or more (CUB's threshold), where many
// tiles are in flight: in a one-wave grid it would only add latency. Each caller passes its own delay
// (its tuning header). Measurements: docs/experiments/cumsum.md and compact.md.
#pragma once
#include <cuda/atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"
#include "prim/util/workspace.h"
#include "prim/warp/scan.cuh"

namespace gpuprim {
namespace lookback {

enum Status : uint32_t { kInvalid = 0, kAggregate = 1, kInclusive = 2 };

// A tile's status and value in one 64-bit word, so that one relaxed store publishes both and one
// relaxed load reads both. 4-byte values take the low half; int64 values (element counts, which are
// non-negative and below 2^62) the low 62 bits. allocate_state zeroes the words (kInvalid).
template <typename Value>
struct TileStatus {
  static_assert(sizeof(Value) == 4 || std::is_same<Value, int64_t>::value, "4-byte values or int64 counts");
  static constexpr int kShift = sizeof(Value) == 4 ? 32 : 62;
  static constexpr unsigned long long kValueMask = (1ull << kShift) - 1;
  unsigned long long word;

  __device__ __forceinline__ void publish(Status status, Value value) {
    unsigned long long bits = 0;
    memcpy(&bits, &value, sizeof(Value));
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(word).store(
        (static_cast<unsigned long long>(status) << kShift) | (bits & kValueMask), cuda::memory_order_relaxed);
  }
  __device__ __forceinline__ Status read(Value& value) {
    const unsigned long long w =
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(word).load(cuda::memory_order_relaxed);
    const unsigned long long bits = w & kValueMask;
    memcpy(&value, &bits, sizeof(Value));
    return static_cast<Status>(w >> kShift);
  }
};

// The exclusive prefix E(entry) of entry >= 1 of a sequence of published statuses (here: groups),
// returned to every lane of the calling warp (which must be whole and converged). `entries` points at
// the row's entry 0; `window` is 32 * kSlots values of shared memory for this warp. Lane l, slot s polls
// the predecessor at distance d = s * 32 + l + 1, so each poll instruction reads 32 neighbouring words.
template <int kSlots, typename Value>
__device__ __forceinline__ Value exclusive_prefix(TileStatus<Value>* entries, int64_t entry, Value* window) {
  const int lane = threadIdx.x % 32;
  for (;;) {
    Value values[kSlots];
    Status statuses[kSlots];
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int64_t d = s * 32 + lane + 1;
      statuses[s] = d <= entry ? entries[entry - d].read(values[s]) : kAggregate;  // before entry 0: nothing
    }
    // Nearest inclusive prefix and nearest not-yet-published predecessor (distances; 0 = none).
    int nearest_inclusive = 0, nearest_invalid = 0;
#pragma unroll
    for (int s = kSlots - 1; s >= 0; --s) {  // backwards, so the smallest distance is kept last
      const unsigned inclusive = __ballot_sync(kFullMask, statuses[s] == kInclusive);
      const unsigned invalid = __ballot_sync(kFullMask, statuses[s] == kInvalid);
      if (inclusive) nearest_inclusive = s * 32 + __ffs(inclusive);
      if (invalid) nearest_invalid = s * 32 + __ffs(invalid);
    }
    if (nearest_inclusive == 0 || (nearest_invalid != 0 && nearest_invalid < nearest_inclusive)) continue;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int d = s * 32 + lane + 1;
      if (d <= nearest_inclusive) window[d - 1] = values[s];
    }
    __syncwarp();
    Value prefix = window[nearest_inclusive - 1];
    if (lane == 0) {
#pragma unroll 8
      for (int d = nearest_inclusive - 1; d >= 1; --d) prefix = prefix + window[d - 1];
    }
    prefix = __shfl_sync(kFullMask, prefix, 0);
    __syncwarp();  // the window may be written again by the next call
    return prefix;
  }
}

constexpr int kGroupTiles = 32;

__host__ __device__ __forceinline__ int64_t groups_for(int64_t tiles) {
  return (tiles + kGroupTiles - 1) / kGroupTiles;
}

// The look-back's device state for `rows` rows of `tiles_per_row` tiles: row r's statuses start at
// tiles + r * tiles_per_row and groups + r * groups_for(tiles_per_row).
template <typename Value>
struct State {
  TileStatus<Value>* tiles;
  TileStatus<Value>* groups;
};

// One workspace allocation, zeroed on `stream`: tile statuses, then group statuses (in row 0 a group's
// 32 tile words are then 256-byte aligned in the allocation).
template <typename Value>
State<Value> allocate_state(int64_t rows, int64_t tiles_per_row, Workspace& workspace, cudaStream_t stream) {
  const int64_t tiles = rows * tiles_per_row, groups = rows * groups_for(tiles_per_row);
  const size_t bytes = sizeof(TileStatus<Value>) * size_t(tiles + groups);
  auto* base = static_cast<TileStatus<Value>*>(workspace.allocate(bytes));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(base, 0, bytes, stream));
  return {base, base + tiles};
}

constexpr unsigned kDelayMinBlocks = 500;

// Publishes tile `tile`'s aggregate and returns its exclusive prefix (Value(0) for tile 0) to every
// lane of the calling warp (whole and converged). `tiles` and `groups` point at the statuses of the
// row's tile 0 and group 0 (ceil(tiles / kGroupTiles) of them); `window` is 32 * kSlots values of
// shared memory for the group look-back. Sleeps first_poll_delay_ns before polling in large grids.
template <int kSlots, typename Value>
__device__ __forceinline__ Value tile_exclusive_prefix(TileStatus<Value>* tiles, TileStatus<Value>* groups,
                                                       int64_t tile, Value aggregate, Value* window,
                                                       unsigned first_poll_delay_ns) {
  const int lane = threadIdx.x % 32;
  const int64_t group = tile / kGroupTiles;
  const int position = int(tile % kGroupTiles);
  if (lane == 0) tiles[tile].publish(kAggregate, aggregate);
  // Lane q < position: the aggregate of the group's tile q; lane `position`: this tile's; others 0.
  Value value = lane == position ? aggregate : Value(0);
  if (gridDim.x >= kDelayMinBlocks) __nanosleep(first_poll_delay_ns);
  for (;;) {
    Status status = kAggregate;
    if (lane < position) status = tiles[tile - position + lane].read(value);
    if (!__any_sync(kFullMask, status == kInvalid)) break;
  }
  const Value inclusive = warp::inclusive_scan(value);
  const Value before_in_group = __shfl_sync(kFullMask, inclusive, position == 0 ? 0 : position - 1);
  const Value group_sum = __shfl_sync(kFullMask, inclusive, kGroupTiles - 1);  // used by the last tile only
  const bool last_of_group = position == kGroupTiles - 1;
  Value group_prefix = Value(0);
  if (group > 0) {
    if (last_of_group && lane == 0) groups[group].publish(kAggregate, group_sum);  // before waiting: others fold it
    group_prefix = exclusive_prefix<kSlots>(groups, group, window);
  }
  if (last_of_group && lane == 0) groups[group].publish(kInclusive, group > 0 ? group_prefix + group_sum : group_sum);
  if (group == 0) return position == 0 ? Value(0) : before_in_group;
  return position == 0 ? group_prefix : group_prefix + before_in_group;
}

}  // namespace lookback
}  // namespace gpuprim
