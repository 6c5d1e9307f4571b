// Shape function of gpuprim::moe_permute: [R, H] with R = token_ids.size(0).
#include <torch/library.h>

#include "ops/moe/moe_permute/moe_permute.h"

namespace gpuprim {
namespace {

at::Tensor moe_permute_meta(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots) {
  moe_permute_check(hidden, token_ids, slots);
  return at::empty_symint({token_ids.sym_size(0), hidden.sym_size(1)},
                          hidden.options().memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("moe_permute", &moe_permute_meta); }

}  // namespace gpuprim
