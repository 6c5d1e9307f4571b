// gpuprim::moe_unpermute — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>
#include <optional>

namespace gpuprim {

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

}  // namespace gpuprim
