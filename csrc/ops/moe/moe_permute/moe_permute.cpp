// Device-independent part of gpuprim::moe_permute: the argument checks of its CPU, CUDA and Meta kernels.
#include <string>

#include "ops/moe/moe_common.h"
#include "ops/moe/moe_permute/moe_permute.h"

namespace gpuprim {

void moe_permute_check(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots) {
  constexpr const char* op = "moe_permute";
  moe_check_rows(op, "hidden", hidden, "[tokens, hidden_size]");
  check_same_device(op, hidden, "token_ids", token_ids);
  GPUPRIM_CHECK_ARG(token_ids.dim() == 1, op, "token_ids", "1-D [rows]", std::to_string(token_ids.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(token_ids.scalar_type() == at::kLong, op, "token_ids", "an int64 tensor",
                      token_ids.scalar_type());
  moe_check_slots(op, hidden, slots);
  GPUPRIM_CHECK_ARG(hidden.sym_size(0) == slots.sym_size(0), op, "hidden",
                    c10::str("of routing.slots.size(0) = ", slots.sym_size(0), " rows (tokens)"),
                    hidden.sym_size(0));
}

}  // namespace gpuprim
