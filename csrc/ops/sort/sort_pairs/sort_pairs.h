// gpuprim::sort_pairs — declarations shared by its CPU, CUDA and Meta files.
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <tuple>

namespace gpuprim {

// Validates arguments (1-D keys, values of keys' length, end_bit only for integer keys and
// within their width).
void sort_pairs_check(const at::Tensor& keys, const at::Tensor& values, std::optional<int64_t> end_bit);

// The device-independent kernel: a stable sort of the keys (gpuprim::sort) and values gathered
// by its indices. Keys are compared in full; with end_bit, keys within [0, 2^end_bit) (the
// documented contract) give the same order as a sort of their low end_bit bits.
std::tuple<at::Tensor, at::Tensor> sort_pairs_by_sort(const at::Tensor& keys, const at::Tensor& values,
                                                      bool descending);

}  // namespace gpuprim
