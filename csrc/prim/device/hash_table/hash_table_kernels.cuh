// Kernels of the device hash table (hash_table.h): one key a thread, grid-stride, probes bounded by the capacity.
#pragma once
#include <cstdint>

#include "prim/device/hash_table/hash.h"
#include "prim/device/hash_table/hash_table.h"
#include "prim/device/hash_table/tuning_hash_table.h"
#include "prim/util/input_error.cuh"
#include "prim/util/launch.h"
#include "prim/warp/aggregate.cuh"

namespace gpuprim {
namespace hash_table {

__device__ __forceinline__ int32_t compare_and_swap(int32_t* p, int32_t expected, int32_t desired) {
  return atomicCAS(p, expected, desired);
}
__device__ __forceinline__ int64_t compare_and_swap(int64_t* p, int64_t expected, int64_t desired) {
  return static_cast<int64_t>(atomicCAS(reinterpret_cast<unsigned long long*>(p),
                                        static_cast<unsigned long long>(expected),
                                        static_cast<unsigned long long>(desired)));
}

// The slot that holds `key` after this call: found, or claimed from a free slot (`claimed` set); -1 when no
// slot is free. A slot changes only once (free -> a key), so a key read there is final and a lost CAS moves on.
// kCasFirst: the CAS is the probe (one round trip a slot, for a map build whose keys are mostly new); otherwise
// the slot is read first (keys that mostly repeat, as a set counting distinct values: a CAS on a hot slot would
// serialize in L2 where reads do not).
template <bool kCasFirst, typename Key>
__device__ __forceinline__ int64_t claim_slot(Key* keys, int64_t capacity, Key key, bool& claimed) {
  claimed = false;
  int64_t s = home_slot(key, capacity);
  for (int64_t step = 0; step < capacity; ++step) {
    const Key current = kCasFirst ? compare_and_swap(keys + s, kEmpty<Key>, key) : keys[s];
    if (current == key) return s;
    if (current == kEmpty<Key>) {
      const Key before = kCasFirst ? current : compare_and_swap(keys + s, kEmpty<Key>, key);
      if (before == kEmpty<Key>) {
        claimed = true;
        return s;
      }
      if (before == key) return s;
    }
    s = next_slot(s, capacity);
  }
  return -1;
}

// Counts a key stored for the first time; returns the size before it (one atomic per warp).
__device__ __forceinline__ int64_t count_new_key(int64_t* state) {
  return static_cast<int64_t>(warp::aggregated_increment(reinterpret_cast<unsigned long long*>(state + kStateSize)));
}

// Marks the key kEmpty stored (its place is beside the slots); true for the thread that stored it first.
__device__ __forceinline__ bool store_empty_key(int64_t* state) {
  return atomicCAS(reinterpret_cast<unsigned long long*>(state + kStateEmptyKeyStored), 0ull, 1ull) == 0ull;
}

// Pass 1: each pair finds or claims its slot (capacity: the kEmpty key's place) and bids its position for it.
// The keys stored for the first time are summed per block and added to the size with one atomic a block (a
// returning atomic a warp on the one counter held every warp up).
template <typename Key, typename Value>
__global__ void __launch_bounds__(Tuning::kThreads)
    claim_kernel(Table<Key, Value> table, const Key* __restrict__ keys, int64_t n,
                 unsigned long long* __restrict__ lowest, int64_t* __restrict__ slot_of, InputCheck full) {
  __shared__ unsigned long long block_new_keys;
  if (threadIdx.x == 0) block_new_keys = 0;
  unsigned new_keys = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Key key = keys[i];
    int64_t s;
    if (key == kEmpty<Key>) {
      s = table.capacity;
      if (store_empty_key(table.state)) ++new_keys;
    } else {
      bool claimed;
      s = claim_slot</*kCasFirst=*/true>(table.keys, table.capacity, key, claimed);
      if (claimed) ++new_keys;
      if (s < 0) record_input_error(full, i, static_cast<int64_t>(key));  // skipped: the table is full
    }
    slot_of[i] = s;
    if (s >= 0) atomicMin(lowest + s, static_cast<unsigned long long>(i));
  }
  __syncthreads();  // every thread is here: the loop has no early exit
  const unsigned warp_new_keys = __reduce_add_sync(0xffffffffu, new_keys);
  if (threadIdx.x % kWarpSize == 0 && warp_new_keys != 0) atomicAdd(&block_new_keys, warp_new_keys);
  __syncthreads();
  if (threadIdx.x == 0 && block_new_keys != 0) {
    atomicAdd(reinterpret_cast<unsigned long long*>(table.state + kStateSize), block_new_keys);
  }
}

// Pass 2: the lowest position that bid for a slot writes its value (insert-or-assign, deterministic).
template <typename Key, typename Value>
__global__ void assign_kernel(Table<Key, Value> table, const Value* __restrict__ values, int64_t n,
                              const unsigned long long* __restrict__ lowest, const int64_t* __restrict__ slot_of) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t s = slot_of[i];
    if (s >= 0 && lowest[s] == static_cast<unsigned long long>(i)) table.values[s] = values[i];
  }
}

template <typename Key, typename Value>
__global__ void find_kernel(Table<Key, Value> table, const Key* __restrict__ queries, int64_t n,
                            Value default_value, Value* __restrict__ out, bool* __restrict__ found) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Key key = queries[i];
    int64_t hit = -1;
    if (key == kEmpty<Key>) {
      if (table.state[kStateEmptyKeyStored] != 0) hit = table.capacity;
    } else {
      int64_t s = home_slot(key, table.capacity);
      for (int64_t step = 0; step < table.capacity; ++step) {
        const Key current = table.keys[s];
        if (current == key) {
          hit = s;
          break;
        }
        if (current == kEmpty<Key>) break;
        s = next_slot(s, table.capacity);
      }
    }
    if (out != nullptr) out[i] = hit >= 0 ? table.values[hit] : default_value;
    if (found != nullptr) found[i] = hit >= 0;
  }
}

template <typename Key>
__global__ void clear_kernel(Key* __restrict__ keys, int64_t capacity) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < capacity; s += stride) keys[s] = kEmpty<Key>;
}

// Set insert that gives up past `limit` keys. The give-up flag is one word that every warp would otherwise read
// for every key (one hot L2 line serializing the pass), so a thread looks at it once in kGiveUpCheckRounds tiles;
// a thread whose own new key passes the limit stops at once, so at most one key a thread lands beyond the limit
// (the launcher keeps the grid's threads within capacity - limit). A high-cardinality input costs a partial read.
// A block takes tiles of kSetItems keys a thread, all loaded before the first probe (more loads in flight).
template <typename Key>
__global__ void __launch_bounds__(Tuning::kThreads)
    insert_set_kernel(Key* __restrict__ table, int64_t capacity, int64_t* state, const Key* __restrict__ keys,
                      int64_t n, int64_t limit, uint32_t* __restrict__ slot_of) {
  constexpr int kItems = Tuning::kSetItems;
  volatile int64_t* gave_up = state + kStateGaveUp;
  const int64_t tile = int64_t(blockDim.x) * kItems;
  int round = 0;
  for (int64_t base = int64_t(blockIdx.x) * tile; base < n; base += int64_t(gridDim.x) * tile, ++round) {
    if (round % Tuning::kGiveUpCheckRounds == 0 && *gave_up != 0) return;
    Key batch[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + int64_t(j) * blockDim.x + threadIdx.x;
      batch[j] = i < n ? keys[i] : Key(0);
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + int64_t(j) * blockDim.x + threadIdx.x;
      if (i >= n) return;
      int64_t s = capacity;
      bool over = false;
      if (batch[j] == kEmpty<Key>) {
        if (store_empty_key(state)) over = count_new_key(state) >= limit;
      } else {
        bool claimed;
        s = claim_slot</*kCasFirst=*/false>(table, capacity, batch[j], claimed);
        if (claimed) over = count_new_key(state) >= limit;
        if (s < 0) over = true;
      }
      if (over) {
        *gave_up = 1;
        return;
      }
      slot_of[i] = static_cast<uint32_t>(s);
    }
  }
}

// The stored keys other than kEmpty with their slots, appended in arrival order (the caller sorts them).
template <typename Key>
__global__ void collect_kernel(const Key* __restrict__ table, int64_t capacity, Key* __restrict__ out_keys,
                               uint32_t* __restrict__ out_slots, unsigned long long* __restrict__ count) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < capacity; s += stride) {
    const Key key = table[s];
    if (key != kEmpty<Key>) {
      const unsigned long long p = warp::aggregated_increment(count);
      out_keys[p] = key;
      out_slots[p] = static_cast<uint32_t>(s);
    }
  }
}

}  // namespace hash_table
}  // namespace gpuprim
