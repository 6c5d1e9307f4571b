// CPU kernels of the hash map ops: the readable reference. The same probe sequence as the CUDA kernels
// (prim/device/hash_table/hash.h); one key at a time, so the slots are those of inserting in position order.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstring>
#include <vector>

#include "common/input_errors.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/hash/hash_map/hash_map.h"
#include "prim/device/hash_table/hash.h"

namespace gpuprim {
namespace {

using hash_table::kEmpty;

// A 1-D tensor's elements at its stride (the table's keys and values may be interleaved in one buffer).
template <typename T>
struct Strided {
  T* data;
  int64_t stride;
  T& operator[](int64_t i) const { return data[i * stride]; }
};

template <typename T>
Strided<T> strided(const at::Tensor& t) {
  return {static_cast<T*>(t.data_ptr()), t.stride(0)};
}

// The slot that holds `key`, or -1 if it is absent (capacity: the kEmpty key's place).
template <typename Key>
int64_t lookup(Strided<const Key> keys, const int64_t* state, int64_t capacity, Key key) {
  if (key == kEmpty<Key>) return state[hash_table::kStateEmptyKeyStored] != 0 ? capacity : -1;
  int64_t s = hash_table::home_slot(key, capacity);
  for (int64_t step = 0; step < capacity; ++step) {
    if (keys[s] == key) return s;
    if (keys[s] == kEmpty<Key>) return -1;
    s = hash_table::next_slot(s, capacity);
  }
  return -1;
}

void hash_map_insert_cpu_(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                          const at::Tensor& new_keys, const at::Tensor& new_values) {
  hash_map_check("hash_map_insert_", keys, values, state, new_keys, "keys");
  hash_map_check_new_values(values, new_keys, new_values);
  const at::Tensor in_keys = new_keys.contiguous(), in_values = new_values.contiguous();
  hash_map_dispatch(keys.scalar_type(), values.scalar_type(), [&](auto key_tag, auto bits_tag) {
    using Key = typename decltype(key_tag)::type;
    using Bits = typename decltype(bits_tag)::type;
    const Strided<Key> table_keys = strided<Key>(keys);
    const Strided<Bits> table_values = strided<Bits>(values);
    int64_t* table_state = state.mutable_data_ptr<int64_t>();
    const int64_t capacity = keys.numel();
    const Key* key_in = in_keys.const_data_ptr<Key>();
    const auto* value_in = static_cast<const Bits*>(in_values.const_data_ptr());
    std::vector<bool> assigned(size_t(capacity) + 1, false);  // by this call: the lowest position wins
    for (int64_t i = 0; i < in_keys.numel(); ++i) {
      const Key key = key_in[i];
      int64_t s = -1;
      if (key == kEmpty<Key>) {
        s = capacity;
        if (table_state[hash_table::kStateEmptyKeyStored] == 0) {
          table_state[hash_table::kStateEmptyKeyStored] = 1;
          ++table_state[hash_table::kStateSize];
        }
      } else {
        int64_t probe = hash_table::home_slot(key, capacity);
        for (int64_t step = 0; step < capacity; ++step) {
          if (table_keys[probe] == key) {
            s = probe;
            break;
          }
          if (table_keys[probe] == kEmpty<Key>) {
            table_keys[probe] = key;
            ++table_state[hash_table::kStateSize];
            s = probe;
            break;
          }
          probe = hash_table::next_slot(probe, capacity);
        }
        if (s < 0) {
          raise_input_error(InputOp::kHashMapInsert, InputArg::kKeys, InputRule::kTableFull, i,
                            static_cast<int64_t>(key), capacity);
        }
      }
      if (!assigned[size_t(s)]) {
        assigned[size_t(s)] = true;
        table_values[s] = value_in[i];
      }
    }
  });
}

// find (out defined) or contains (found defined).
void lookup_all(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state, const at::Tensor& queries,
                uint64_t default_bits, at::Tensor* out, at::Tensor* found) {
  const at::Tensor q = queries.contiguous();
  hash_map_dispatch(keys.scalar_type(), values.scalar_type(), [&](auto key_tag, auto bits_tag) {
    using Key = typename decltype(key_tag)::type;
    using Bits = typename decltype(bits_tag)::type;
    const Strided<const Key> table_keys = strided<const Key>(keys);
    const Strided<const Bits> table_values = strided<const Bits>(values);
    const int64_t* table_state = state.const_data_ptr<int64_t>();
    const Key* query = q.const_data_ptr<Key>();
    const int64_t capacity = keys.numel();
    Bits fallback;
    std::memcpy(&fallback, &default_bits, sizeof(Bits));
    auto* out_bits = out != nullptr ? static_cast<Bits*>(out->mutable_data_ptr()) : nullptr;
    bool* found_flags = found != nullptr ? found->mutable_data_ptr<bool>() : nullptr;
    at::parallel_for(0, q.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t s = lookup(table_keys, table_state, capacity, query[i]);
        if (out_bits != nullptr) out_bits[i] = s >= 0 ? table_values[s] : fallback;
        if (found_flags != nullptr) found_flags[i] = s >= 0;
      }
    });
  });
}

at::Tensor hash_map_find_cpu(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                             const at::Tensor& queries, const c10::Scalar& default_value) {
  at::Tensor out = hash_map_find_output(keys, values, state, queries);
  lookup_all(
      keys, values, state, queries,
      scalar_bits("hash_map_find", "default_value", default_value, values.scalar_type(), "the table's value dtype"),
      &out, nullptr);
  return out;
}

at::Tensor hash_map_contains_cpu(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                                 const at::Tensor& queries) {
  at::Tensor found = hash_map_contains_output(keys, values, state, queries);
  lookup_all(keys, values, state, queries, 0, nullptr, &found);
  return found;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) {
  impl(m, "hash_map_insert_", &hash_map_insert_cpu_,
       "hash_map_find", &hash_map_find_cpu,
       "hash_map_contains", &hash_map_contains_cpu);
}

}  // namespace gpuprim
