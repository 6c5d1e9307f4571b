// CUDA glue of the hash map ops: checks, outputs, guard, stream, workspace; a full table is recorded on the
// device and raised at the next gpuprim call (or by gpuprim.check_errors()), never a hang.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/hash/hash_map/hash_map.h"
#include "ops/hash/hash_map/hash_map_launch.h"

namespace gpuprim {
namespace {

HashMapTable table_of(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state) {
  return {keys.data_ptr(),
          values.data_ptr(),
          state.data_ptr<int64_t>(),
          keys.numel(),
          static_cast<int>(keys.element_size()),
          static_cast<int>(values.element_size()),
          keys.stride(0),
          values.stride(0)};
}

void hash_map_insert_cuda_(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                           const at::Tensor& new_keys, const at::Tensor& new_values) {
  const InputErrorScope errors(keys.device(), InputOp::kHashMapInsert);
  hash_map_check("hash_map_insert_", keys, values, state, new_keys, "keys");
  hash_map_check_new_values(values, new_keys, new_values);
  const c10::cuda::CUDAGuard guard(keys.device());
  const at::Tensor in_keys = new_keys.contiguous(), in_values = new_values.contiguous();
  TorchWorkspace workspace(keys.device());
  hash_map_insert_cuda_launch(table_of(keys, values, state), in_keys.const_data_ptr(), in_values.const_data_ptr(),
                              in_keys.numel(), errors.check(InputArg::kKeys, InputRule::kTableFull, keys.numel()),
                              workspace, current_stream());
}

at::Tensor hash_map_find_cuda(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                              const at::Tensor& queries, const c10::Scalar& default_value) {
  check_input_errors(keys.device());  // what earlier calls' kernels found (no sync)
  at::Tensor out = hash_map_find_output(keys, values, state, queries);
  const c10::cuda::CUDAGuard guard(keys.device());
  const at::Tensor q = queries.contiguous();
  hash_map_find_cuda_launch(
      table_of(keys, values, state), q.const_data_ptr(), q.numel(),
      scalar_bits("hash_map_find", "default_value", default_value, values.scalar_type(), "the table's value dtype"),
      out.data_ptr(), nullptr, current_stream());
  return out;
}

at::Tensor hash_map_contains_cuda(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                                  const at::Tensor& queries) {
  check_input_errors(keys.device());
  at::Tensor found = hash_map_contains_output(keys, values, state, queries);
  const c10::cuda::CUDAGuard guard(keys.device());
  const at::Tensor q = queries.contiguous();
  hash_map_find_cuda_launch(table_of(keys, values, state), q.const_data_ptr(), q.numel(), 0, nullptr,
                            found.data_ptr<bool>(), current_stream());
  return found;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) {
  impl(m, "hash_map_insert_", &hash_map_insert_cuda_,
       "hash_map_find", &hash_map_find_cuda,
       "hash_map_contains", &hash_map_contains_cuda);
}

}  // namespace gpuprim
