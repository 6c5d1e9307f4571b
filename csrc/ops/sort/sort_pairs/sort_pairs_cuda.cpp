// CUDA glue of gpuprim::sort_pairs: 32/64-bit integer keys with 4- or 8-byte value rows, ascending,
// fewer than 2^31 pairs, go straight to CUB's radix sort (no encode or decode pass: CUB's own speed);
// every other case is the generic stable sort of the keys plus a gather of the values.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/sort/sort_pairs/sort_pairs.h"
#include "ops/sort/sort_pairs/sort_pairs_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> sort_pairs_cuda(const at::Tensor& keys, const at::Tensor& values, bool descending,
                                                   std::optional<int64_t> end_bit) {
  check_input_errors(keys.device());  // what earlier calls' kernels found (no sync)
  sort_pairs_check(keys, values, end_bit);
  const c10::cuda::CUDAGuard guard(keys.device());
  const auto key_type = keys.scalar_type();
  const int64_t row_bytes =
      values.numel() == 0 ? 0 : int64_t(values.element_size()) * (values.numel() / values.size(0));
  const bool direct = !descending && (key_type == at::kInt || key_type == at::kLong) &&
                      (row_bytes == 4 || row_bytes == 8) && keys.numel() <= INT32_MAX;
  if (!direct) return sort_pairs_by_sort(keys, values, descending);
  const at::Tensor keys_in = keys.contiguous();
  const at::Tensor values_in = values.contiguous();
  at::Tensor keys_out = at::empty_like(keys_in);
  at::Tensor values_out = at::empty_like(values_in);
  // A signed key's sign bit is flipped inside CUB, so keys in [0, 2^end_bit) sort correctly on
  // their low end_bit bits.
  const int width = int(keys.element_size()) * 8;
  TorchWorkspace workspace(keys.device());
  sort_pairs_cuda_launch(keys_in.const_data_ptr(), keys_out.mutable_data_ptr(), int(keys.element_size()),
                         values_in.const_data_ptr(), values_out.mutable_data_ptr(), int(row_bytes), keys.numel(),
                         int(end_bit.value_or(width)), workspace, current_stream());
  return {keys_out, values_out};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("sort_pairs", &sort_pairs_cuda); }

}  // namespace gpuprim
