// CPU kernel of gpuprim::compact: the readable reference for the CUDA kernel.
#include <torch/library.h>

#include <cstring>

#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"

namespace gpuprim {

namespace {

// out[k] = the k-th kept element of x (row-major order), bit copies; then fill_value (or nothing).
std::tuple<at::Tensor, at::Tensor> compact_cpu(const at::Tensor& x, const at::Tensor& mask,
                                               const std::optional<at::Scalar>& fill_value) {
  const at::Tensor fill = compact_checked_fill(x, mask, fill_value);
  const at::Tensor input = x.contiguous();
  const at::Tensor flags = mask.contiguous();
  auto [out, count] = compact_outputs(x);
  const int64_t n = x.numel();
  const size_t size = x.element_size();
  const auto* src = static_cast<const char*>(input.const_data_ptr());
  auto* dst = static_cast<char*>(out.mutable_data_ptr());
  const bool* keep = flags.const_data_ptr<bool>();
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (keep[i]) {
      std::memcpy(dst + kept * size, src + i * size, size);
      ++kept;
    }
  }
  count.mutable_data_ptr<int64_t>()[0] = kept;
  if (fill.defined()) out.narrow(0, kept, n - kept).fill_(fill);
  return {out, count};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("compact", &compact_cpu); }

}  // namespace gpuprim
