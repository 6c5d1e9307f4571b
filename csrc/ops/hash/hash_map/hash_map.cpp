// The hash map ops' device-independent part: the checks of the table and of the keys and values given to it.
#include "ops/hash/hash_map/hash_map.h"

#include <algorithm>

#include "common/torch_utils.h"
#include "prim/device/hash_table/hash.h"

namespace gpuprim {
namespace {

// Two layouts: keys and values in two contiguous tensors, or interleaved in one buffer (HashMap.empty's): slot
// s is 2W bytes at s * 2W, W the wider of the two dtypes, the key first and the value W bytes after it (the
// strides and offsets say so; a wrapper such as a fake tensor need not show the shared buffer).
void check_table_layout(const char* op, const at::Tensor& keys, const at::Tensor& values) {
  if (keys.is_contiguous() && values.is_contiguous()) return;
  const int64_t key_bytes = keys.element_size(), value_bytes = values.element_size();
  const int64_t slot_bytes = 2 * std::max(key_bytes, value_bytes);
  GPUPRIM_CHECK_ARG(keys.sym_stride(0) * key_bytes == slot_bytes && values.sym_stride(0) * value_bytes == slot_bytes &&
                        values.sym_storage_offset() * value_bytes ==
                            keys.sym_storage_offset() * key_bytes + slot_bytes / 2,
                    op, "the table's keys and values",
                    c10::str("two contiguous tensors, or interleaved in ", slot_bytes, "-byte slots with the value ",
                             slot_bytes / 2, " bytes after its key as HashMap.empty makes them"),
                    c10::str("strides ", keys.sym_strides(), " and ", values.sym_strides(), ", offsets ",
                             keys.sym_storage_offset(), " and ", values.sym_storage_offset()));
}

}  // namespace

void hash_map_check(const char* op, const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                    const at::Tensor& query, const char* query_name) {
  GPUPRIM_CHECK_DTYPE(keys.scalar_type() == at::kInt || keys.scalar_type() == at::kLong, op, "the table's keys",
                      "int32 or int64", keys.scalar_type());
  const auto value_type = values.scalar_type();
  GPUPRIM_CHECK_DTYPE(value_type == at::kInt || value_type == at::kLong || value_type == at::kFloat ||
                          value_type == at::kDouble,
                      op, "the table's values", "int32, int64, float32 or float64", value_type);
  // Sym sizes: the fake kernels check too.
  GPUPRIM_CHECK_ARG(keys.dim() == 1 && keys.sym_numel() >= 1, op, "the table's keys",
                    "a 1-D tensor of capacity >= 1 elements", keys.sym_sizes());
  GPUPRIM_CHECK_ARG(values.dim() == 1 && values.sym_numel() == keys.sym_numel() + 1, op, "the table's values",
                    c10::str("a 1-D tensor of capacity + 1 = ", keys.sym_numel() + 1, " elements"),
                    values.sym_sizes());
  check_table_layout(op, keys, values);
  GPUPRIM_CHECK_DTYPE(state.scalar_type() == at::kLong, op, "the table's state", "int64", state.scalar_type());
  GPUPRIM_CHECK_ARG(state.dim() == 1 && state.sym_numel() == hash_table::kStateWords && state.is_contiguous(), op,
                    "the table's state", "a contiguous 1-D tensor of 2 elements", state.sym_sizes());
  GPUPRIM_CHECK_DTYPE(query.scalar_type() == keys.scalar_type(), op, query_name,
                      std::string("the table's key dtype ") + c10::toString(keys.scalar_type()), query.scalar_type());
  check_same_device(op, keys, "the table's values", values);
  check_same_device(op, keys, "the table's state", state);
  check_same_device(op, keys, query_name, query);
}

at::Tensor hash_map_find_output(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                                const at::Tensor& queries) {
  hash_map_check("hash_map_find", keys, values, state, queries, "queries");
  return at::empty_symint(queries.sym_sizes(), values.options());
}

at::Tensor hash_map_contains_output(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                                    const at::Tensor& queries) {
  hash_map_check("hash_map_contains", keys, values, state, queries, "queries");
  return at::empty_symint(queries.sym_sizes(), queries.options().dtype(at::kBool));
}

void hash_map_check_new_values(const at::Tensor& values, const at::Tensor& new_keys, const at::Tensor& new_values) {
  constexpr const char* op = "hash_map_insert_";
  GPUPRIM_CHECK_DTYPE(new_values.scalar_type() == values.scalar_type(), op, "values",
                      std::string("the table's value dtype ") + c10::toString(values.scalar_type()),
                      new_values.scalar_type());
  GPUPRIM_CHECK_ARG(new_values.sym_sizes() == new_keys.sym_sizes(), op, "values", "of the keys' shape",
                    new_values.sym_sizes());
  check_same_device(op, new_keys, "values", new_values);
}

}  // namespace gpuprim
