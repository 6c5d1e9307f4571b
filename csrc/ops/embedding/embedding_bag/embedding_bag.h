// gpuprim::embedding_bag — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>

#include <optional>
#include <vector>

#include "ops/embedding/embedding_bag/embedding_bag_launch.h"
#include "prim/util/input_error.cuh"

namespace gpuprim {

struct EmbeddingBagArgs {
  EmbeddingBagMode mode;
  int64_t padding_idx;  // wrapped into [0, num_weights); -1: none
};

// Checks everything that can be checked without reading data (SymInt-safe: also used by the Meta kernels).
EmbeddingBagArgs embedding_bag_check(const at::Tensor& weight, const at::Tensor& indices,
                                     const std::optional<at::Tensor>& offsets, c10::string_view mode,
                                     const std::optional<at::Tensor>& per_sample_weights,
                                     std::optional<int64_t> padding_idx, bool include_last_offset, bool sparse,
                                     bool scale_grad_by_freq = false);

// Also checks grad, bag_size and max_indices for the backward op.
EmbeddingBagArgs embedding_bag_backward_check(const at::Tensor& grad, const at::Tensor& weight,
                                              const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
                                              const at::Tensor& bag_size, const at::Tensor& max_indices,
                                              const std::optional<at::Tensor>& per_sample_weights,
                                              c10::string_view mode, std::optional<int64_t> padding_idx,
                                              bool include_last_offset, bool sparse,
                                              bool scale_grad_by_freq = false);

// Number of bags: indices.size(0) for 2-D indices, else len(offsets) (- 1 with include_last_offset).
c10::SymInt embedding_bag_num_bags(const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
                                   bool include_last_offset);

// The forward's empty outputs (SymInt-safe): out [bags, embedding_dim] of weight's dtype, bag_size [bags] and
// max_indices ([bags, embedding_dim] for mode max, else [0]) int64.
std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag_outputs(const at::Tensor& weight,
                                                                     const at::Tensor& indices,
                                                                     const std::optional<at::Tensor>& offsets,
                                                                     bool include_last_offset, EmbeddingBagMode mode);

// int64 [bags + 1] bag bounds on indices' device (no sync): offsets followed by len(indices), or offsets as
// given with include_last_offset, or multiples of the row length for 2-D indices.
at::Tensor embedding_bag_bounds(const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
                                bool include_last_offset);

// The rules only the data can break (torch's): every index in [0, num_weights), bounds starting at 0, never
// decreasing, ending at or before len(indices). Raises IndexError / ValueError naming the first violation.
// Host data: the CPU kernels call it on every call (the CUDA kernels check while they read).
void embedding_bag_check_data(const at::Tensor& indices, const std::vector<int64_t>& bounds, int64_t num_weights,
                              bool from_offsets, bool include_last_offset, InputOp op);

// The sizes the kernels see (real tensors only).
EmbeddingBagShape embedding_bag_shape(const at::Tensor& weight, const at::Tensor& indices, int64_t bags,
                                      int64_t padding_idx);

}  // namespace gpuprim
