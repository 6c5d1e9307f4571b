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

// Slots s, s + 1, ... to the end of slot s's sector (and of the table), at least 1: one DRAM fetch holds them all,
// so a probe loads them at once. Slot s's key is keys[s * stride]; 1 where slots do not tile sectors.
template <typename Key>
__device__ __forceinline__ int sector_run(const Key* keys, int64_t stride, int64_t s, int64_t capacity) {
  constexpr int64_t kSector = Tuning::kSectorBytes;
  const int64_t slot_bytes = int64_t(sizeof(Key)) * stride;
  const auto address = reinterpret_cast<uintptr_t>(keys + s * stride);
  if (slot_bytes > kSector || kSector % slot_bytes != 0 || address % slot_bytes != 0) return 1;
  const int64_t run = (kSector - int64_t(address % kSector)) / slot_bytes;
  return static_cast<int>(run < capacity - s ? run : capacity - s);
}

// The most slots a sector_run can hold (stride 1; a larger stride fills fewer): the arrays that receive one run.
template <typename Key>
constexpr int kMaxRun = Tuning::kSectorBytes / static_cast<int>(sizeof(Key));

// The slot that holds `key` after this call: found, or claimed from a free slot (`claimed` set); -1 when no
// slot is free. A slot changes only once (free -> a key), so a key read there is final and a lost CAS moves on.
// kCasFirst: the home slot's CAS is the probe (one round trip, for a map build whose keys are mostly new), and
// past it each sector's remaining slots are read at once and the first free one is CAS'd (no failed CAS a
// slot); otherwise every slot is read first (keys that mostly repeat, as a set counting distinct values: a CAS
// on a hot slot would serialize in L2 where reads do not). Slot s's key is keys[s * stride].
template <bool kCasFirst, typename Key>
__device__ __forceinline__ int64_t claim_slot(Key* keys, int64_t capacity, Key key, bool& claimed, int64_t stride = 1) {
  claimed = false;
  int64_t s = home_slot(key, capacity);
  if constexpr (!kCasFirst) {
    for (int64_t step = 0; step < capacity; ++step) {
      Key* slot = keys + s * stride;
      const Key current = *slot;
      if (current == key) return s;
      if (current == kEmpty<Key>) {
        const Key before = compare_and_swap(slot, kEmpty<Key>, key);
        if (before == kEmpty<Key>) {
          claimed = true;
          return s;
        }
        if (before == key) return s;
      }
      s = next_slot(s, capacity);
    }
    return -1;
  } else {
    const Key home = compare_and_swap(keys + s * stride, kEmpty<Key>, key);
    if (home == kEmpty<Key>) {
      claimed = true;
      return s;
    }
    if (home == key) return s;
    constexpr int kRun = kMaxRun<Key>;
    s = next_slot(s, capacity);
    for (int64_t probed = 1; probed < capacity;) {
      const int run = sector_run(keys, stride, s, capacity);
      Key current[kRun];
#pragma unroll
      for (int j = 0; j < kRun; ++j) current[j] = j < run ? keys[(s + j) * stride] : key;
      int next = run;  // the first slot of the run holding the key or free; the whole run if none
      bool holds_key = false;
#pragma unroll
      for (int j = 0; j < kRun; ++j) {
        if (next == run && j < run && (current[j] == key || current[j] == kEmpty<Key>)) {
          next = j;
          holds_key = current[j] == key;
        }
      }
      if (next < run) {
        const int64_t t = s + next;
        if (holds_key) return t;
        const Key before = compare_and_swap(keys + t * stride, kEmpty<Key>, key);
        if (before == kEmpty<Key>) {
          claimed = true;
          return t;
        }
        if (before == key) return t;
        ++next;  // another key took it: go on past it
      }
      probed += next;
      s += next;
      if (s >= capacity) s -= capacity;
    }
    return -1;
  }
}

// Counts a key stored for the first time; returns the size before it (one atomic per warp).
__device__ __forceinline__ int64_t count_new_key(int64_t* state) {
  return static_cast<int64_t>(warp::aggregated_increment(reinterpret_cast<unsigned long long*>(state + kStateSize)));
}

// Marks the key kEmpty stored (its place is beside the slots); true for the thread that stored it first.
__device__ __forceinline__ bool store_empty_key(int64_t* state) {
  return atomicCAS(reinterpret_cast<unsigned long long*>(state + kStateEmptyKeyStored), 0ull, 1ull) == 0ull;
}

// The slot that already holds `key` (capacity for the key kEmpty), or -1: the probe of a key that pass 1 stored.
template <typename Key, typename Value>
__device__ __forceinline__ int64_t stored_slot(const Table<Key, Value>& table, Key key) {
  if (key == kEmpty<Key>) return table.capacity;
  int64_t s = home_slot(key, table.capacity);
  for (int64_t step = 0; step < table.capacity; ++step) {
    const Key current = table.key(s);
    if (current == key) return s;
    if (current == kEmpty<Key>) return -1;
    s = next_slot(s, table.capacity);
  }
  return -1;
}

// Pass 1: each pair finds or claims its slot; a claimer writes its value at once, so keys that occur once in
// the call (a build's usual case) are done here. A key that was already stored when its thread arrived (an
// earlier key of the table or a repeat within the call) sets *repeated, which turns on the bid passes. The
// keys stored for the first time are summed per block and added to the size with one atomic a block.
template <typename Key, typename Value>
__global__ void __launch_bounds__(Tuning::kThreads)
    claim_kernel(Table<Key, Value> table, const Key* __restrict__ keys, const Value* __restrict__ values, int64_t n,
                 unsigned* __restrict__ repeated, InputCheck full) {
  __shared__ unsigned long long block_new_keys;
  if (threadIdx.x == 0) block_new_keys = 0;
  unsigned new_keys = 0;
  bool seen_stored = false;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Key key = keys[i];
    bool claimed;
    int64_t s;
    if (key == kEmpty<Key>) {
      s = table.capacity;
      claimed = store_empty_key(table.state);
    } else {
      s = claim_slot</*kCasFirst=*/true>(table.keys, table.capacity, key, claimed, table.key_stride);
      if (s < 0) record_input_error(full, i, static_cast<int64_t>(key));  // skipped: the table is full
    }
    if (claimed) {
      table.value(s) = values[i];
      ++new_keys;
    } else if (s >= 0) {
      seen_stored = true;
    }
  }
  // Every thread is here (the loop has no early exit).
  const bool block_seen_stored = __syncthreads_or(seen_stored);
  const unsigned warp_new_keys = __reduce_add_sync(0xffffffffu, new_keys);
  if (threadIdx.x % kWarpSize == 0 && warp_new_keys != 0) atomicAdd(&block_new_keys, warp_new_keys);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (block_new_keys != 0) {
      atomicAdd(reinterpret_cast<unsigned long long*>(table.state + kStateSize), block_new_keys);
    }
    if (block_seen_stored) *repeated = 1;
  }
}

// The bid passes, only where pass 1 met a stored key (each thread looks at *repeated first, so otherwise they
// cost a launch): no position has bid (all ones), every position bids for its slot, the lowest one writes.
__global__ void clear_bids_kernel(unsigned long long* __restrict__ lowest, int64_t slots,
                                  const unsigned* __restrict__ repeated) {
  if (*repeated == 0) return;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < slots; s += stride) lowest[s] = ~0ull;
}

template <typename Key, typename Value>
__global__ void bid_kernel(Table<Key, Value> table, const Key* __restrict__ keys, int64_t n,
                           unsigned long long* __restrict__ lowest, const unsigned* __restrict__ repeated) {
  if (*repeated == 0) return;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t s = stored_slot(table, keys[i]);
    if (s >= 0) atomicMin(lowest + s, static_cast<unsigned long long>(i));
  }
}

template <typename Key, typename Value>
__global__ void assign_kernel(Table<Key, Value> table, const Key* __restrict__ keys, const Value* __restrict__ values,
                              int64_t n, const unsigned long long* __restrict__ lowest,
                              const unsigned* __restrict__ repeated) {
  if (*repeated == 0) return;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t s = stored_slot(table, keys[i]);
    if (s >= 0 && lowest[s] == static_cast<unsigned long long>(i)) table.value(s) = values[i];
  }
}

// Slot s of a paired table (Table::paired): its key and value in one load (8 or 16 bytes, little-endian).
template <typename Key, typename Value>
__device__ __forceinline__ void load_pair(const Table<Key, Value>& table, int64_t s, Key& key, Value& value) {
  if constexpr (sizeof(Key) == 4) {
    const uint64_t pair = *reinterpret_cast<const uint64_t*>(table.keys + 2 * s);
    key = static_cast<Key>(static_cast<uint32_t>(pair));
    value = static_cast<Value>(pair >> 32);
  } else {
    const ulonglong2 pair = *reinterpret_cast<const ulonglong2*>(table.keys + 2 * s);
    key = static_cast<Key>(pair.x);
    value = static_cast<Value>(pair.y);
  }
}

// Slots s and s + 1 of a paired table of 4-byte keys in one 16-byte load where they share an aligned 16 bytes
// (`wide`: the table starts 16-byte aligned; s even and s + 1 inside it), else slot s alone. Returns the count.
template <typename Key, typename Value>
__device__ __forceinline__ int load_pairs(const Table<Key, Value>& table, int64_t s, bool wide, Key (&key)[2],
                                          Value (&value)[2]) {
  static_assert(sizeof(Key) == 4 && sizeof(Value) == 4, "two 8-byte slots in 16 bytes");
  if (wide && s % 2 == 0 && s + 1 < table.capacity) {
    const uint4 slots = *reinterpret_cast<const uint4*>(table.keys + 2 * s);
    key[0] = static_cast<Key>(slots.x);
    value[0] = static_cast<Value>(slots.y);
    key[1] = static_cast<Key>(slots.z);
    value[1] = static_cast<Value>(slots.w);
    return 2;
  }
  load_pair(table, s, key[0], value[0]);
  return 1;
}

// A paired table of 4-byte keys probes two slots a load where it can (load_pairs): the same slots in the same
// order in fewer dependent loads, each still one request.
template <bool kPaired, typename Key, typename Value>
__global__ void find_kernel(Table<Key, Value> table, const Key* __restrict__ queries, int64_t n, Value default_value,
                            Value* __restrict__ out, bool* __restrict__ found) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const Key key = queries[i];
    bool hit = false;
    Value value = default_value;
    if (key == kEmpty<Key>) {
      hit = table.state[kStateEmptyKeyStored] != 0;
      if (hit) value = table.value(table.capacity);
    } else {
      int64_t s = home_slot(key, table.capacity);
      if constexpr (kPaired && sizeof(Key) == 4 && sizeof(Value) == 4) {
        const bool wide = reinterpret_cast<uintptr_t>(table.keys) % 16 == 0;
        for (int64_t probed = 0; probed < table.capacity;) {
          Key current[2];
          Value current_value[2];
          const int run = load_pairs(table, s, wide, current, current_value);
          bool decided = current[0] == key || current[0] == kEmpty<Key>;
          hit = current[0] == key;
          if (hit) value = current_value[0];
          if (!decided && run == 2) {
            decided = current[1] == key || current[1] == kEmpty<Key>;
            hit = current[1] == key;
            if (hit) value = current_value[1];
          }
          if (decided) break;
          probed += run;
          s += run;
          if (s >= table.capacity) s -= table.capacity;
        }
      } else {
        for (int64_t step = 0; step < table.capacity; ++step) {
          Key current;
          Value current_value{};
          if constexpr (kPaired) {
            load_pair(table, s, current, current_value);
          } else {
            current = table.key(s);
          }
          if (current == key) {
            hit = true;
            value = kPaired ? current_value : table.value(s);
            break;
          }
          if (current == kEmpty<Key>) break;
          s = next_slot(s, table.capacity);
        }
      }
    }
    if (out != nullptr) out[i] = value;
    if (found != nullptr) found[i] = hit;
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
