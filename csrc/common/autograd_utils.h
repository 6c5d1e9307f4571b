// Shared pieces of the ops' torch::autograd::Function classes (*_autograd.cpp).
#pragma once
#include <torch/autograd.h>

#include <cstddef>
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
