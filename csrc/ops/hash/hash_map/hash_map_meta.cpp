// Shape functions of the hash map ops for fake tensors / torch.compile: lookups have the queries' shape.
#include <torch/library.h>

#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/hash/hash_map/hash_map.h"

namespace gpuprim {
namespace {

void hash_map_insert_meta_(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                           const at::Tensor& new_keys, const at::Tensor& new_values) {
  hash_map_check("hash_map_insert_", keys, values, state, new_keys, "keys");
  hash_map_check_new_values(values, new_keys, new_values);
}

at::Tensor hash_map_find_meta(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                              const at::Tensor& queries, const c10::Scalar&) {
  return hash_map_find_output(keys, values, state, queries);
}

at::Tensor hash_map_contains_meta(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                                  const at::Tensor& queries) {
  return hash_map_contains_output(keys, values, state, queries);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) {
  impl(m, "hash_map_insert_", &hash_map_insert_meta_,
       "hash_map_find", &hash_map_find_meta,
       "hash_map_contains", &hash_map_contains_meta);
}

}  // namespace gpuprim
