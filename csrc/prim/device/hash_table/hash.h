// The hash table's layout and probe sequence, host-compilable: the CPU kernels probe with these very
// functions, so a CPU table and a CUDA table of the same capacity hold the same keys (their slots may
// differ on CUDA, where colliding keys of one call claim slots in any order; contents never do).
//
// A table of capacity C is three plain tensors: keys [C] (kEmpty<Key> marks a free slot), values [C + 1]
// (values[C] belongs to the key kEmpty itself, which a slot cannot hold) and state [kStateWords] int64.
#pragma once
#include <cstdint>
#include <limits>

#include "prim/util/host_device.h"

namespace gpuprim {
namespace hash_table {

// The free-slot marker: the key type's minimum (a real key too, kept beside the slots).
template <typename Key>
constexpr Key kEmpty = std::numeric_limits<Key>::min();

constexpr int kStateSize = 0;           // keys stored, the kEmpty key included
constexpr int kStateEmptyKeyStored = 1;  // 1 when the key kEmpty is stored (its value is values[capacity])
constexpr int kStateWords = 2;
constexpr int kStateGaveUp = 2;     // sets (insert_set): 1 once more keys than the limit arrived
constexpr int kSetStateWords = 3;

// murmur3's 64-bit finalizer: every key bit moves every slot bit (sequential ids spread out).
GPUPRIM_HD uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

GPUPRIM_HD uint64_t mul_high(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// The key's first slot: its hash scaled onto [0, capacity) (any capacity, no modulo).
template <typename Key>
GPUPRIM_HD int64_t home_slot(Key key, int64_t capacity) {
  return static_cast<int64_t>(mul_high(mix(static_cast<uint64_t>(static_cast<int64_t>(key))),
                                       static_cast<uint64_t>(capacity)));
}

// Linear probing: the slot after s, wrapping.
GPUPRIM_HD int64_t next_slot(int64_t s, int64_t capacity) { return s + 1 == capacity ? 0 : s + 1; }

}  // namespace hash_table
}  // namespace gpuprim
