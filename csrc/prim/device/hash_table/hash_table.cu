// The device hash table's launchers (hash_table.h), instantiated once for every op that uses them.
#include "prim/device/hash_table/hash_table.h"

#include <algorithm>

#include "prim/device/hash_table/hash_table_kernels.cuh"
#include "prim/device/hash_table/tuning_hash_table.h"
#include "prim/util/cuda_check.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace hash_table {

template <typename Key, typename Value>
void insert(Table<Key, Value> table, const Key* keys, const Value* values, int64_t n, InputCheck full,
            Workspace& workspace, cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = Tuning::kThreads;
  auto* repeated = static_cast<unsigned*>(workspace.allocate(sizeof(unsigned)));
  auto* lowest = static_cast<unsigned long long*>(workspace.allocate(sizeof(unsigned long long) *
                                                                     size_t(table.capacity + 1)));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(repeated, 0, sizeof(unsigned), stream));
  // A key a thread: a warp waits for its longest probe once, not once a key (one size atomic a block).
  claim_kernel<Key, Value><<<grid_for(n, kThreads), kThreads, 0, stream>>>(table, keys, values, n, repeated, full);
  GPUPRIM_LAUNCH_CHECK();
  // The bid passes: a few waves of resident blocks, so that finding nothing to do costs no more than a launch.
  const int64_t waves = Tuning::kClaimWaves * resident_blocks(bid_kernel<Key, Value>, kThreads);
  clear_bids_kernel<<<grid_for(table.capacity + 1, kThreads, waves), kThreads, 0, stream>>>(
      lowest, table.capacity + 1, repeated);
  GPUPRIM_LAUNCH_CHECK();
  bid_kernel<Key, Value><<<grid_for(n, kThreads, waves), kThreads, 0, stream>>>(table, keys, n, lowest, repeated);
  GPUPRIM_LAUNCH_CHECK();
  assign_kernel<Key, Value><<<grid_for(n, kThreads, waves), kThreads, 0, stream>>>(table, keys, values, n, lowest,
                                                                                  repeated);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Key, typename Value>
void find(Table<Key, Value> table, const Key* queries, int64_t n, Value default_value, Value* out, bool* found,
          cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = Tuning::kThreads;
  if (table.paired()) {
    find_kernel<true, Key, Value><<<grid_for(n, kThreads), kThreads, 0, stream>>>(table, queries, n, default_value,
                                                                                out, found);
  } else {
    find_kernel<false, Key, Value><<<grid_for(n, kThreads), kThreads, 0, stream>>>(table, queries, n, default_value,
                                                                                 out, found);
  }
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Key>
void clear_set(Key* table, int64_t capacity, int64_t* state, cudaStream_t stream) {
  constexpr int kThreads = Tuning::kThreads;
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(state, 0, sizeof(int64_t) * kSetStateWords, stream));
  if (capacity <= 0) return;
  clear_kernel<Key><<<grid_for(capacity, kThreads), kThreads, 0, stream>>>(table, capacity);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Key>
void insert_set(Key* table, int64_t capacity, int64_t* state, const Key* keys, int64_t n, int64_t limit,
                uint32_t* slot_of, cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = Tuning::kThreads;
  // A few waves of resident blocks, and no more threads than keys that fit beyond the limit (one each at most).
  auto kernel = insert_set_kernel<Key>;
  const int64_t cap = std::min<int64_t>(Tuning::kClaimWaves * resident_blocks(kernel, kThreads),
                                        std::max<int64_t>(1, (capacity - limit) / kThreads));
  kernel<<<grid_for(n, int64_t(kThreads) * Tuning::kSetItems, cap), kThreads, 0, stream>>>(table, capacity, state,
                                                                                          keys, n, limit, slot_of);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Key>
void collect(const Key* table, int64_t capacity, Key* out_keys, uint32_t* out_slots, unsigned long long* count,
             cudaStream_t stream) {
  if (capacity <= 0) return;
  constexpr int kThreads = Tuning::kThreads;
  collect_kernel<Key><<<grid_for(capacity, kThreads), kThreads, 0, stream>>>(table, capacity, out_keys, out_slots,
                                                                             count);
  GPUPRIM_LAUNCH_CHECK();
}

#define GPUPRIM_HASH_SET_INSTANTIATE(Key)                                                                  \
  template void clear_set<Key>(Key*, int64_t, int64_t*, cudaStream_t);                                     \
  template void insert_set<Key>(Key*, int64_t, int64_t*, const Key*, int64_t, int64_t, uint32_t*, cudaStream_t); \
  template void collect<Key>(const Key*, int64_t, Key*, uint32_t*, unsigned long long*, cudaStream_t);
GPUPRIM_HASH_SET_INSTANTIATE(int32_t)
GPUPRIM_HASH_SET_INSTANTIATE(int64_t)
#undef GPUPRIM_HASH_SET_INSTANTIATE

#define GPUPRIM_HASH_TABLE_INSTANTIATE(Key, Value)                                                             \
  template void insert<Key, Value>(Table<Key, Value>, const Key*, const Value*, int64_t, InputCheck, Workspace&, \
                                   cudaStream_t);                                                              \
  template void find<Key, Value>(Table<Key, Value>, const Key*, int64_t, Value, Value*, bool*, cudaStream_t);
GPUPRIM_HASH_TABLE_INSTANTIATE(int32_t, uint32_t)
GPUPRIM_HASH_TABLE_INSTANTIATE(int32_t, uint64_t)
GPUPRIM_HASH_TABLE_INSTANTIATE(int64_t, uint32_t)
GPUPRIM_HASH_TABLE_INSTANTIATE(int64_t, uint64_t)
#undef GPUPRIM_HASH_TABLE_INSTANTIATE

}  // namespace hash_table
}  // namespace gpuprim
