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
  auto* lowest = static_cast<unsigned long long*>(workspace.allocate(sizeof(unsigned long long) *
                                                                     size_t(table.capacity + 1)));
  auto* slot_of = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(n)));
  // All ones: no position has bid yet.
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(lowest, 0xFF, sizeof(unsigned long long) * size_t(table.capacity + 1), stream));
  // A few waves of resident blocks, each thread taking keys in turn: few blocks, so few size atomics.
  auto claim = claim_kernel<Key, Value>;
  claim<<<grid_for(n, kThreads, Tuning::kClaimWaves * resident_blocks(claim, kThreads)), kThreads, 0, stream>>>(
      table, keys, n, lowest, slot_of, full);
  GPUPRIM_LAUNCH_CHECK();
  assign_kernel<Key, Value><<<grid_for(n, kThreads), kThreads, 0, stream>>>(table, values, n, lowest, slot_of);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename Key, typename Value>
void find(Table<Key, Value> table, const Key* queries, int64_t n, Value default_value, Value* out, bool* found,
          cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int kThreads = Tuning::kThreads;
  find_kernel<Key, Value><<<grid_for(n, kThreads), kThreads, 0, stream>>>(table, queries, n, default_value, out,
                                                                          found);
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
