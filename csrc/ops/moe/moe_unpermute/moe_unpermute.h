// gpuprim::moe_unpermute — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>
#include <optional>
#include <tuple>

#include "ops/moe/moe_common.h"

namespace gpuprim {

// The gradients of moe_unpermute: (grad_expert_out, grad_gates).
using UnpermuteGrads = std::tuple<at::Tensor, at::Tensor>;

// Checks expert_out [R, H] (floating), slots int64 [T, k], gates [T, k] floating (SymInt-safe).
void moe_unpermute_check(const at::Tensor& expert_out, const at::Tensor& slots,
                         const std::optional<at::Tensor>& gates);

// Also checks grad: [T, H] of expert_out's dtype.
void moe_unpermute_backward_check(const at::Tensor& grad, const at::Tensor& expert_out, const at::Tensor& slots,
                                  const std::optional<at::Tensor>& gates, bool gates_grad);

// The accumulation dtype: fp64 for fp64 expert_out, else fp32. Gates are read in it.
inline at::ScalarType moe_acc_type(const at::Tensor& expert_out) {
  return expert_out.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

// The gates as the kernels read them: contiguous, in the accumulation dtype; undefined for None.
inline at::Tensor moe_gates_in_acc(const std::optional<at::Tensor>& gates, const at::Tensor& expert_out) {
  return gates.has_value() ? moe_contiguous_as(*gates, moe_acc_type(expert_out)) : at::Tensor();
}

// The backward's outputs, uninitialized (SymInt-safe): grad_expert_out of expert_out's shape (contiguous) and
// grad_gates, in the accumulation dtype, [tokens, k] when gates_grad, else [0].
UnpermuteGrads moe_unpermute_backward_outputs(const at::Tensor& expert_out, const at::Tensor& slots, bool gates_grad);

}  // namespace gpuprim
