// A static open-addressing hash table on the device (linear probing, layout in hash.h), ATen-free: keys
// int32 / int64, values carried as their bits (uint32 / uint64: int32, float, int64, double all fit).
// Callers: the HashMap ops (ops/hash/hash_map) and unique's hash path (ops/hash/unique).
//
// Determinism: run_to_run for the contents (which keys are stored, each key's value, the size), not for the
// slots: colliding keys of one insert claim slots in the order their threads arrive. Every result read
// through find / contains is therefore deterministic, and equal to the CPU kernels' (same probe sequence).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/device/hash_table/hash.h"
#include "prim/util/host_device.h"
#include "prim/util/input_error.cuh"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace hash_table {

// Slot s's key is keys[s * key_stride] and its value values[s * value_stride]: strides of 1 are two arrays;
// interleaved (key and value side by side, HashMap's own layout) a lookup reads one sector instead of two.
template <typename Key, typename Value>
struct Table {
  Key* keys;        // [capacity], kEmpty<Key> where free
  Value* values;    // [capacity + 1]; the last is the key kEmpty's
  int64_t* state;   // [kStateWords]
  int64_t capacity;  // >= 1
  int64_t key_stride, value_stride;  // >= 1, in elements

  GPUPRIM_HD Key& key(int64_t s) const { return keys[s * key_stride]; }
  GPUPRIM_HD Value& value(int64_t s) const { return values[s * value_stride]; }
  // Key and value of one width side by side in slots aligned to their size: a lookup loads both at once.
  bool paired() const {
    return sizeof(Key) == sizeof(Value) && key_stride == 2 && value_stride == 2 &&
           static_cast<void*>(keys + 1) == static_cast<void*>(values) &&
           reinterpret_cast<uintptr_t>(keys) % (2 * sizeof(Key)) == 0;
  }
};

// Insert-or-assign of n pairs (keys[i], values[i]). Among equal keys of one call the lowest position's value
// is stored. A new key that finds no free slot (the table is full) is skipped and recorded in `full`
// (rule kTableFull; nothing is recorded where full.record is null). Probes are bounded by the capacity:
// never a hang. One pass claims slots (CAS on the key) and writes the claimers' values; only where a key met
// one already stored (a repeat, or a key of an earlier call) do the bid passes run: every position bids for its
// slot and the lowest writes. Workspace: 8 * (capacity + 1) + 4 bytes. No host sync.
template <typename Key, typename Value>
void insert(Table<Key, Value> table, const Key* keys, const Value* values, int64_t n, InputCheck full,
            Workspace& workspace, cudaStream_t stream);

// For each of n queries: out[i] = its value, or default_value where the key is absent (out may be null);
// found[i] = whether it is present (found may be null). No host sync.
template <typename Key, typename Value>
void find(Table<Key, Value> table, const Key* queries, int64_t n, Value default_value, Value* out, bool* found,
          cudaStream_t stream);

// Instantiated in hash_table.cu for Key in {int32, int64} and Value in {uint32, uint64}.

// Sets: keys only, capacity < 2^32, state of kSetStateWords words (the map's, then the give-up flag).
// An empty set: every key kEmpty, the state zeroed.
template <typename Key>
void clear_set(Key* table, int64_t capacity, int64_t* state, cudaStream_t stream);

// Inserts keys[0, n) into the set and writes each one's slot (capacity for the key kEmpty) to slot_of, until
// more than `limit` keys are stored: then state[kStateGaveUp] = 1 and the rest is skipped (slot_of unwritten).
// limit < capacity; each thread stores at most one key past the limit and the grid has at most capacity - limit
// threads, so the table never fills. The stored keys do not depend on timing unless it gives up. No host sync.
template <typename Key>
void insert_set(Key* table, int64_t capacity, int64_t* state, const Key* keys, int64_t n, int64_t limit,
                uint32_t* slot_of, cudaStream_t stream);

// The stored keys other than kEmpty and their slots, in no particular order (distinct keys: sort them for a
// deterministic order); *count (zeroed by the caller) ends as their number. No host sync.
template <typename Key>
void collect(const Key* table, int64_t capacity, Key* out_keys, uint32_t* out_slots, unsigned long long* count,
             cudaStream_t stream);

// Instantiated in hash_table.cu for Key in {int32, int64}.

}  // namespace hash_table
}  // namespace gpuprim
