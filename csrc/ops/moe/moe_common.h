// Shared by the MoE ops: argument checks (the rows of token states, the slots of a routing: each rule written
// once) and the input conversion of their kernels.
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "common/torch_utils.h"

namespace gpuprim {

// A 2-D fp16/bf16/fp32/fp64 tensor of rows: `shape` names its dims, e.g. "[tokens, hidden_size]".
inline void moe_check_rows(const char* op, const char* arg, const at::Tensor& rows, const char* shape) {
  const auto type = rows.scalar_type();
  GPUPRIM_CHECK_DTYPE(type == at::kHalf || type == at::kBFloat16 || type == at::kFloat || type == at::kDouble, op,
                      arg, "a float16, bfloat16, float32 or float64 tensor", type);
  GPUPRIM_CHECK_ARG(rows.dim() == 2, op, arg, std::string("2-D ") + shape, std::to_string(rows.dim()) + "-D tensor");
}

// routing.slots: int64 [tokens, k], on the device of `first`.
inline void moe_check_slots(const char* op, const at::Tensor& first, const at::Tensor& slots) {
  check_same_device(op, first, "slots", slots);
  GPUPRIM_CHECK_ARG(slots.dim() == 2, op, "slots", "2-D [tokens, k]", std::to_string(slots.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(slots.scalar_type() == at::kLong, op, "slots", "an int64 tensor", slots.scalar_type());
}

// t as a contiguous tensor of `type`: t itself (no dispatcher call) when it already is one.
inline at::Tensor moe_contiguous_as(const at::Tensor& t, at::ScalarType type) {
  return t.scalar_type() == type ? t.contiguous() : t.to(type).contiguous();
}

}  // namespace gpuprim
