// Launch constants of the hash table's kernels (prim/device/hash_table), per architecture; to be measured with
// benchmarks/bench_hash_map.py (insert and find against a random gather of the same slots).
#pragma once
#include <cstdint>

namespace gpuprim {
namespace hash_table {

struct TuningSm90 {
  static constexpr int kThreads = 256;  // one key a thread; probes are latency-bound, so occupancy is what counts
  static constexpr int kClaimWaves = 4;  // set insert, map bid passes: grid = this many waves of resident blocks
  static constexpr int kSetItems = 4;  // set insert: keys a thread loads before probing (loads in flight)
  static constexpr int kGiveUpCheckRounds = 8;  // set insert: tiles between looks at the give-up flag (a hot line)
  // Sets that count distinct values (unique's hash path): 2^22 slots of 4 or 8 bytes stay in the 50 MB L2, and
  // half of them (the give-up limit) leaves far more room than the threads in flight can overshoot.
  static constexpr int64_t kDistinctSlots = int64_t(1) << 22;
  // DRAM's unit of access: the slots of one sector are loaded together (one fetch), not one dependent load each.
  static constexpr int kSectorBytes = 32;
};

using Tuning = TuningSm90;

}  // namespace hash_table
}  // namespace gpuprim
