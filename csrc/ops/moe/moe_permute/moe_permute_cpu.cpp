// CPU kernel of gpuprim::moe_permute (gather of token rows into the expert-ordered buffer): the reference.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstring>
#include <string>

#include "common/torch_utils.h"
#include "ops/moe/moe_permute/moe_permute.h"

namespace gpuprim {

void moe_permute_check(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots) {
  constexpr const char* op = "moe_permute";
  const auto type = hidden.scalar_type();
  GPUPRIM_CHECK_DTYPE(type == at::kHalf || type == at::kBFloat16 || type == at::kFloat || type == at::kDouble, op,
                      "hidden", "a float16, bfloat16, float32 or float64 tensor", type);
  GPUPRIM_CHECK_ARG(hidden.dim() == 2, op, "hidden", "2-D [tokens, hidden_size]",
                    std::to_string(hidden.dim()) + "-D tensor");
  check_same_device(op, hidden, "token_ids", token_ids);
  check_same_device(op, hidden, "slots", slots);
  GPUPRIM_CHECK_ARG(token_ids.dim() == 1, op, "token_ids", "1-D [rows]", std::to_string(token_ids.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(token_ids.scalar_type() == at::kLong, op, "token_ids", "an int64 tensor",
                      token_ids.scalar_type());
  GPUPRIM_CHECK_ARG(slots.dim() == 2, op, "slots", "2-D [tokens, k]", std::to_string(slots.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(slots.scalar_type() == at::kLong, op, "slots", "an int64 tensor", slots.scalar_type());
  GPUPRIM_CHECK_ARG(hidden.sym_size(0) == slots.sym_size(0), op, "hidden",
                    c10::str("of routing.slots.size(0) = ", slots.sym_size(0), " rows (tokens)"),
                    hidden.sym_size(0));
}

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
