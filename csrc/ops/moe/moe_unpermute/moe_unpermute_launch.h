// ATen-free interface between moe_unpermute_cuda.cpp (glue) and moe_unpermute_cuda.cu (kernels).
#pragma once
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/input_error.cuh"
#include "prim/util/workspace.h"
#include "prim/util/stream.h"

namespace gpuprim {

// tokens x k (token, choice) pairs; expert_out has `rows` rows of `hidden` elements.
struct MoeUnpermuteShape {
  int64_t tokens, k, rows, hidden;
  InputCheck slots_check;  // where a slot outside [-1, rows) is recorded (it adds nothing)
};

// out[t] = sum_{j = 0..k-1} gates[t, j] * expert_out[slots[t, j]], accumulated in Acc (fp32, fp64 for fp64
// data) with separately rounded multiply and add in the order j = 0..k-1; slots outside [0, rows) add nothing.
// gates: Acc [tokens, k] or nullptr (weight 1). type: fp16/bf16/fp32/fp64 of expert_out and out.
void moe_unpermute_cuda_launch(const void* expert_out, DType type, const int64_t* slots, const void* gates,
                               MoeUnpermuteShape shape, void* out, cudaStream_t stream);

// grad_expert_out[slots[t, j]] = gates[t, j] * grad[t], every other row 0 (grad_expert_out need not be
// initialized); grad_gates (Acc [tokens, k], or nullptr: not wanted) = <grad[t], expert_out[slots[t, j]]>, 0 where
// dropped. Writes nothing when hidden == 0.
void moe_unpermute_backward_cuda_launch(const void* grad, const void* expert_out, DType type, const int64_t* slots,
                                        const void* gates, MoeUnpermuteShape shape, void* grad_expert_out,
                                        void* grad_gates, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
