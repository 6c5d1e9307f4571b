// Decoupled look-back (Merrill & Garland) for single-pass scans over tiles, made deterministic.
//
// Each tile publishes its aggregate A(i) as soon as it has it, then its inclusive prefix I(i) once
// it knows its exclusive prefix E(i). A tile finds E(i) by reading its predecessors' statuses. The
// classic look-back adds the aggregates it meets right to left and stops at the first inclusive
// prefix, so a float result depends on which predecessor happened to be done. Here the values are
// folded left to right from the nearest inclusive prefix instead:
//   E(i) = ((I(j) + A(j+1)) + A(j+2)) + ... + A(i-1),   I(i) = E(i) + A(i),   E(0) = 0.
// I(j) is the same left fold up to tile j, so E(i) is the sequential fold of all earlier aggregates
// whichever j a run finds: bitwise identical run to run, at the cost of folding i-1-j values in one
// thread (the nearest inclusive prefix is typically a round trip's worth of tiles back).
//
// A tile that sees no inclusive prefix in its window (the kSlots * 32 nearest predecessors) polls
// again rather than reaching further back (which would need the newer values kept for the fold):
// predecessors only ever wait for earlier tiles, so one of them publishes an inclusive prefix.
// Tiles must be claimed in increasing order (an atomic counter) so that every tile waited for is
// running or done, whatever the block scheduling order.
#pragma once
#include <cuda/atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim {
namespace lookback {

enum Status : uint32_t { kInvalid = 0, kAggregate = 1, kInclusive = 2 };

// A tile's status and value in one 64-bit word, so that one relaxed store publishes both and one
// relaxed load reads both. 4-byte values take the low half; int64 values (element counts, which are
// non-negative and below 2^62) the low 62 bits. The launcher zeroes the words (kInvalid).
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

// E(tile) for tile >= 1, returned to every lane of the calling warp (which must be whole and
// converged). `tiles` points at the status of the row's tile 0; `window` is 32 * kSlots values of
// shared memory for this warp. Lane l, slot s polls the predecessor at distance d = s * 32 + l + 1,
// so each poll instruction reads 32 neighbouring words.
template <int kSlots, typename Value>
__device__ __forceinline__ Value exclusive_prefix(TileStatus<Value>* tiles, int64_t tile, Value* window) {
  const int lane = threadIdx.x % 32;
  for (;;) {
    Value values[kSlots];
    Status statuses[kSlots];
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int64_t d = s * 32 + lane + 1;
      statuses[s] = d <= tile ? tiles[tile - d].read(values[s]) : kAggregate;  // before tile 0: nothing to wait for
    }
    // Nearest inclusive prefix and nearest not-yet-published predecessor (distances; 0 = none).
    int nearest_inclusive = 0, nearest_invalid = 0;
#pragma unroll
    for (int s = kSlots - 1; s >= 0; --s) {  // backwards, so the smallest distance is kept last
      const unsigned inclusive = __ballot_sync(0xffffffffu, statuses[s] == kInclusive);
      const unsigned invalid = __ballot_sync(0xffffffffu, statuses[s] == kInvalid);
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
    prefix = __shfl_sync(0xffffffffu, prefix, 0);
    __syncwarp();  // the window may be written again by the next call
    return prefix;
  }
}

}  // namespace lookback
}  // namespace gpuprim
