// CPU kernel of gpuprim::masked_select: the kept elements of x in row-major order, exactly as many as mask has set.
#include <torch/library.h>

#include <cstring>

#include "ops/compact/compact/compact.h"
#include "ops/compact/masked_select/masked_select.h"

namespace gpuprim {
namespace {

at::Tensor masked_select_cpu(const at::Tensor& x, const at::Tensor& mask) {
  const auto [x_full, mask_full] = masked_select_broadcast(x, mask);
  const at::Tensor input = x_full.contiguous();
  const at::Tensor flags = mask_full.contiguous();
  const int64_t n = input.numel();
  const bool* keep = flags.const_data_ptr<bool>();
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) kept += keep[i] ? 1 : 0;
  at::Tensor out = at::empty({kept}, x.options());
  const size_t size = x.element_size();
  const auto* src = static_cast<const char*>(input.const_data_ptr());
  auto* dst = static_cast<char*>(out.mutable_data_ptr());
  for (int64_t i = 0, k = 0; i < n; ++i) {
    if (keep[i]) std::memcpy(dst + size * k++, src + size * i, size);
  }
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("masked_select", &masked_select_cpu); }

}  // namespace gpuprim
