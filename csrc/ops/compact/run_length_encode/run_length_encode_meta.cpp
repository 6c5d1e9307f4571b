// Shape function of gpuprim::run_length_encode for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_meta(const at::Tensor& x, std::optional<int64_t> dim) {
  if (dim.has_value() && x.dim() > 1) {  // slices: unique has x's shape, counts one entry per slice
    const int64_t d = run_length_encode_dim_check(x, *dim);
    return {at::empty_symint(x.sym_sizes(), x.options()),
            at::empty_symint({x.sym_size(d)}, x.options().dtype(at::kLong)),
            at::empty({1}, x.options().dtype(at::kLong))};
  }
  if (dim.has_value()) run_length_encode_dim_check(x, *dim);
  run_length_encode_check(x);
  return {at::empty_symint(x.sym_sizes(), x.options()), at::empty_symint(x.sym_sizes(), x.options().dtype(at::kLong)),
          at::empty({1}, x.options().dtype(at::kLong))};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("run_length_encode", &run_length_encode_meta); }

}  // namespace gpuprim
