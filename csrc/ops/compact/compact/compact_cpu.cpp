// CPU kernel of gpuprim::compact: the readable reference for the CUDA kernel.
#include <torch/library.h>

#include <cstring>

#include "common/torch_utils.h"
#include "ops/compact/compact/compact.h"

namespace gpuprim {

void compact_check(const at::Tensor& x, const at::Tensor& mask, const char* op) {
  const auto type = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(type) || at::isIntegralType(type, /*includeBool=*/true), op, "x",
                      "a floating-point, integer or bool tensor", type);
  GPUPRIM_CHECK_DTYPE(mask.scalar_type() == at::kBool, op, "mask", "a bool tensor", mask.scalar_type());
  check_same_device(op, x, "mask", mask);
  GPUPRIM_CHECK_ARG(mask.sym_sizes() == x.sym_sizes(), op, "mask", c10::str("of x's shape ", x.sym_sizes()),
                    mask.sym_sizes());
}

at::Tensor compact_fill(const at::Tensor& x, const std::optional<at::Scalar>& fill_value) {
  if (!fill_value.has_value()) return at::Tensor();
  at::Tensor fill = at::empty({}, at::TensorOptions().dtype(x.scalar_type()));
  try {
    fill.fill_(*fill_value);  // checks that x's dtype holds the value
  } catch (const std::exception&) {  // catch (const c10::Error&) did not catch it here (tried: 2026-11-30)
    GPUPRIM_CHECK_ARG(false, "compact", "fill_value", c10::str("representable in x's dtype ", x.scalar_type()),
                      *fill_value);
  }
  return fill;
}

namespace {

// out[k] = the k-th kept element of x (row-major order), bit copies; then fill_value (or nothing).
std::tuple<at::Tensor, at::Tensor> compact_cpu(const at::Tensor& x, const at::Tensor& mask,
                                               const std::optional<at::Scalar>& fill_value) {
  compact_check(x, mask);
  const at::Tensor fill = compact_fill(x, fill_value);
  const at::Tensor input = x.contiguous();
  const at::Tensor flags = mask.contiguous();
  at::Tensor out = at::empty({x.numel()}, x.options());
  at::Tensor count = at::empty({1}, x.options().dtype(at::kLong));
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
