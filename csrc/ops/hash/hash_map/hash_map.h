// gpuprim's hash map ops (hash_map_insert_, hash_map_find, hash_map_contains) — declarations shared by their
// CPU, CUDA, Meta and Autograd files. The table is three plain tensors (prim/device/hash_table/hash.h):
// keys [capacity] int32/int64, values [capacity + 1] int32/int64/float32/float64, state [2] int64; keys and
// values either contiguous or interleaved in one buffer (hash_map_check).
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// The table's tensors: same device, dtypes and sizes as above (capacity >= 1), keys and values in two
// contiguous tensors or interleaved (slots of twice the wider dtype, the value in the slot's second half), and
// `query` (the keys inserted or looked up, named `query_name`) of the table's key dtype.
void hash_map_check(const char* op, const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                    const at::Tensor& query, const char* query_name);

// find's and contains' checks, and their empty output of queries' shape (SymInt-safe): the table's value dtype
// (find) or bool (contains).
at::Tensor hash_map_find_output(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                                const at::Tensor& queries);
at::Tensor hash_map_contains_output(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                                    const at::Tensor& queries);

// hash_map_insert_'s new values: one per new key, of the table's value dtype.
void hash_map_check_new_values(const at::Tensor& values, const at::Tensor& new_keys, const at::Tensor& new_values);

template <typename T>
struct HashMapType {
  using type = T;
};

// Calls f(HashMapType<Key>, HashMapType<Bits>) with Key the table's key type and Bits the unsigned integer of
// its value's width: values are stored and copied as bits, so float32 shares int32's code.
template <typename F>
void hash_map_dispatch(at::ScalarType key_type, at::ScalarType value_type, F&& f) {
  auto with_key = [&](auto key) {
    if (c10::elementSize(value_type) == 4) {
      f(key, HashMapType<uint32_t>{});
    } else {
      f(key, HashMapType<uint64_t>{});
    }
  };
  if (key_type == at::kInt) {
    with_key(HashMapType<int32_t>{});
  } else {
    with_key(HashMapType<int64_t>{});
  }
}

}  // namespace gpuprim
