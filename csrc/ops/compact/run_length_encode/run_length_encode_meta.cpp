// Shape function of gpuprim::run_length_encode for fake tensors / torch.compile (SymInt-safe).
#include <torch/library.h>

#include "common/torch_utils.h"
#include "ops/compact/run_length_encode/run_length_encode.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode_meta(const at::Tensor& x) {
  run_length_encode_check(x);
  return {at::empty_symint(x.sym_sizes(), x.options()), at::empty_symint(x.sym_sizes(), x.options().dtype(at::kLong)),
          at::empty({1}, x.options().dtype(at::kLong))};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("run_length_encode", &run_length_encode_meta); }

}  // namespace gpuprim
