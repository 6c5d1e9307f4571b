// A device-side list of long items cut into fixed-size chunks, for the kernels that hand long rows (spmm) or
// high-degree vertices (bfs) to many warps: one 64-bit atomic registers an item and reserves its chunk slots,
// and a later pass finds the item of any chunk slot by a binary search. No host sync: the counts stay on the
// device.
#pragma once
#include <cstdint>

#include "prim/warp/aggregate.cuh"

namespace gpuprim {
namespace merge_path {

// Entry e is item[e], whose chunks own the slots first_chunk[e] ... (up to the next entry's first slot).
// `counter` packs (entries << 32) | slots, so that one atomic gives an item both, and entries are in slot order;
// callers size chunks so that the slots stay below 2^32 (nnz / 256 does up to 2^40 nonzeros).
struct WorkList {
  unsigned long long* counter;
  int64_t* item;
  int64_t* first_chunk;
  int64_t capacity;       // entries item and first_chunk hold
  int64_t slot_capacity;  // chunk slots the caller's workspace holds

  // Entries and slots that fit. Input that breaks the caller's bounds (offsets out of order) registers more; those
  // items are dropped: an entry past capacity is not written, one whose chunks pass slot_capacity is written as
  // item -1 with first_chunk = slot_capacity. Entries stay in slot order, so readers skip item < 0 and chunks
  // past their item's end.
  __device__ __forceinline__ int64_t entries() const {
    const int64_t n = static_cast<int64_t>(*counter >> 32);
    return n < capacity ? n : capacity;
  }
  __device__ __forceinline__ int64_t slots() const {
    const int64_t n = static_cast<int64_t>(*counter & 0xFFFFFFFFull);
    return n < slot_capacity ? n : slot_capacity;
  }

  // Registers `what` with ceil(length / chunk) chunks; the lanes of a warp that push together share one atomic.
  __device__ __forceinline__ void push(int64_t what, int64_t length, int64_t chunk) const {
    const unsigned long long chunks = static_cast<unsigned long long>((length + chunk - 1) / chunk);
    const unsigned long long old = warp::aggregated_fetch_add(counter, (1ull << 32) | chunks);
    const int64_t e = static_cast<int64_t>(old >> 32);
    const int64_t first = static_cast<int64_t>(old & 0xFFFFFFFFull);
    if (e >= capacity) return;
    const bool fits = first + static_cast<int64_t>(chunks) <= slot_capacity;
    item[e] = fits ? what : -1;
    first_chunk[e] = fits ? first : slot_capacity;
  }

  // The entry holding chunk slot `slot` (< slots()) among the first `count` entries: the last one whose first
  // slot is <= slot.
  __device__ __forceinline__ int64_t entry_of(int64_t slot, int64_t count) const {
    int64_t lo = 0, hi = count - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (first_chunk[mid] <= slot)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  }
};

}  // namespace merge_path
}  // namespace gpuprim
