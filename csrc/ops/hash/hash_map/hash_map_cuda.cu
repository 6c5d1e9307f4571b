// Kernels of the hash map ops: prim's device hash table (prim/device/hash_table), per key and value width.
#include <type_traits>

#include "ops/hash/hash_map/hash_map_launch.h"
#include "prim/device/hash_table/hash_table.h"

namespace gpuprim {
namespace {

template <typename F>
void with_table(const HashMapTable& t, F&& f) {
  auto with_key = [&](auto* key) {
    using Key = std::remove_pointer_t<decltype(key)>;
    if (t.value_bytes == 4) {
      f(hash_table::Table<Key, uint32_t>{key, static_cast<uint32_t*>(t.values), t.state, t.capacity, t.key_stride,
                                         t.value_stride});
    } else {
      f(hash_table::Table<Key, uint64_t>{key, static_cast<uint64_t*>(t.values), t.state, t.capacity, t.key_stride,
                                         t.value_stride});
    }
  };
  if (t.key_bytes == 4) {
    with_key(static_cast<int32_t*>(t.keys));
  } else {
    with_key(static_cast<int64_t*>(t.keys));
  }
}

}  // namespace

void hash_map_insert_cuda_launch(const HashMapTable& table, const void* keys, const void* values, int64_t n,
                                 InputCheck full, Workspace& workspace, cudaStream_t stream) {
  with_table(table, [&](auto t) {
    using Key = std::remove_pointer_t<decltype(t.keys)>;
    using Value = std::remove_pointer_t<decltype(t.values)>;
    hash_table::insert(t, static_cast<const Key*>(keys), static_cast<const Value*>(values), n, full, workspace,
                       stream);
  });
}

void hash_map_find_cuda_launch(const HashMapTable& table, const void* queries, int64_t n, uint64_t default_bits,
                               void* out, bool* found, cudaStream_t stream) {
  with_table(table, [&](auto t) {
    using Key = std::remove_pointer_t<decltype(t.keys)>;
    using Value = std::remove_pointer_t<decltype(t.values)>;
    hash_table::find(t, static_cast<const Key*>(queries), n, static_cast<Value>(default_bits),
                     static_cast<Value*>(out), found, stream);
  });
}

}  // namespace gpuprim
