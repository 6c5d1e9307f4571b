// CPU kernel of gpuprim::moe_permute (gather of token rows into the expert-ordered buffer): the reference.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstring>

#include "common/input_errors.h"
#include "ops/moe/moe_permute/moe_permute.h"

namespace gpuprim {
namespace {

at::Tensor moe_permute_cpu(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots) {
  moe_permute_check(hidden, token_ids, slots);
  const at::Tensor input = hidden.contiguous();
  const at::Tensor ids_t = token_ids.contiguous();
  const int64_t rows = ids_t.size(0), tokens = input.size(0);
  at::Tensor out = at::empty({rows, input.size(1)}, input.options());
  const int64_t row_bytes = input.size(1) * input.element_size();
  if (out.numel() == 0) return out;
  const char* src = static_cast<const char*>(input.const_data_ptr());
  char* dst = static_cast<char*>(out.mutable_data_ptr());
  const int64_t* ids = ids_t.const_data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {  // -1 marks a padding row
    if (ids[r] < -1 || ids[r] >= tokens) {
      raise_input_error(InputOp::kMoePermute, InputArg::kTokenIds, InputRule::kOutOfRange, r, ids[r], tokens);
    }
  }
  at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t = ids[r];
      if (t < 0 || t >= tokens) {
        std::memset(dst + r * row_bytes, 0, row_bytes);  // padding rows (-1) and bad ids read nothing
      } else {
        std::memcpy(dst + r * row_bytes, src + t * row_bytes, row_bytes);
      }
    }
  });
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("moe_permute", &moe_permute_cpu); }

}  // namespace gpuprim
