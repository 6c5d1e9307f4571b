// Shared pieces of the ops' torch::autograd::Function classes (*_autograd.cpp).
#pragma once
#include <torch/autograd.h>

#include <cstddef>
#include <optional>
#include <tuple>
#include <utility>

namespace gpuprim {

// A forward's return value: the differentiable outputs, then the integer ones (indices, ids, counts) marked
// non-differentiable. Gradients are not materialized, so backward sees an undefined gradient, not zeros, for an
// output that no gradient reached.
inline torch::autograd::variable_list with_integer_outputs(torch::autograd::AutogradContext* ctx,
                                                           torch::autograd::variable_list differentiable,
                                                           const torch::autograd::variable_list& integer) {
  ctx->mark_non_differentiable(integer);
  ctx->set_materialize_grads(false);
  differentiable.insert(differentiable.end(), integer.begin(), integer.end());
  return differentiable;
}

// Whether autograd has work for a call with these inputs: a gradient to record (grad mode on and an input that
// requires grad) or a forward-mode tangent, which the Functions reject (torch raises) rather than drop. Without
// either, an Autograd kernel may call the op below autograd and skip a node's host cost.
inline bool autograd_needed(const at::Tensor& t) {
  return (at::GradMode::is_enabled() && t.requires_grad()) || t._fw_grad(/*level=*/0).defined();
}
inline bool autograd_needed(const std::optional<at::Tensor>& t) { return t.has_value() && autograd_needed(*t); }

namespace detail {
template <std::size_t... I>
auto outputs_as_tuple(const torch::autograd::variable_list& outputs, std::index_sequence<I...>) {
  return std::make_tuple(outputs[I]...);
}
}  // namespace detail

// Function::apply's outputs as the op's tuple of N tensors.
template <std::size_t N>
auto as_tuple(const torch::autograd::variable_list& outputs) {
  return detail::outputs_as_tuple(outputs, std::make_index_sequence<N>{});
}

}  // namespace gpuprim
