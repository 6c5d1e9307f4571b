// The hash map ops' device-independent part: the checks of the table and of the keys and values given to it.
#include "ops/hash/hash_map/hash_map.h"

#include "common/torch_utils.h"
#include "prim/device/hash_table/hash.h"

namespace gpuprim {

void hash_map_check(const char* op, const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                    const at::Tensor& query, const char* query_name) {
  GPUPRIM_CHECK_DTYPE(keys.scalar_type() == at::kInt || keys.scalar_type() == at::kLong, op, "the table's keys",
                      "int32 or int64", keys.scalar_type());
  const auto value_type = values.scalar_type();
  GPUPRIM_CHECK_DTYPE(value_type == at::kInt || value_type == at::kLong || value_type == at::kFloat ||
                          value_type == at::kDouble,
                      op, "the table's values", "int32, int64, float32 or float64", value_type);
  // Sym sizes: the fake kernels check too.
  GPUPRIM_CHECK_ARG(keys.dim() == 1 && keys.sym_numel() >= 1 && keys.is_contiguous(), op, "the table's keys",
                    "a contiguous 1-D tensor of capacity >= 1 elements", keys.sym_sizes());
  GPUPRIM_CHECK_ARG(values.dim() == 1 && values.sym_numel() == keys.sym_numel() + 1 && values.is_contiguous(), op,
                    "the table's values",
                    c10::str("a contiguous 1-D tensor of capacity + 1 = ", keys.sym_numel() + 1, " elements"),
                    values.sym_sizes());
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
