// Device-independent parts of gpuprim::embedding_bag: argument checks, bag bounds and shapes (CPU, CUDA, Meta).
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "common/input_errors.h"
#include "common/torch_utils.h"
#include "ops/embedding/embedding_bag/embedding_bag.h"

namespace gpuprim {

namespace {

constexpr const char* kOp = "embedding_bag";

EmbeddingBagMode parse_mode(c10::string_view mode) {
  if (mode == "sum") return EmbeddingBagMode::kSum;
  if (mode == "mean") return EmbeddingBagMode::kMean;
  if (mode == "max") return EmbeddingBagMode::kMax;
  GPUPRIM_CHECK_ARG(false, kOp, "mode", "one of 'sum', 'mean', 'max'", "'" + std::string(mode) + "'");
  return EmbeddingBagMode::kSum;  // unreachable
}

bool is_index_type(at::ScalarType t) { return t == at::kInt || t == at::kLong; }

}  // namespace

EmbeddingBagArgs embedding_bag_check(const at::Tensor& weight, const at::Tensor& indices,
                                     const std::optional<at::Tensor>& offsets, c10::string_view mode,
                                     const std::optional<at::Tensor>& per_sample_weights,
                                     std::optional<int64_t> padding_idx, bool include_last_offset, bool sparse,
                                     bool scale_grad_by_freq) {
  const EmbeddingBagMode op = parse_mode(mode);
  const auto type = weight.scalar_type();
  GPUPRIM_CHECK_DTYPE(!is_index_type(type) || !at::isFloatingType(indices.scalar_type()), kOp, "weight",
                      "the first argument: gpuprim.embedding_bag(weight, indices, offsets) takes weight first, "
                      "unlike torch.nn.functional.embedding_bag(input, weight, offsets)",
                      c10::str("an integer weight (", type, ") and floating indices (", indices.scalar_type(), ")"));
  GPUPRIM_CHECK_DTYPE(type == at::kHalf || type == at::kBFloat16 || type == at::kFloat || type == at::kDouble, kOp,
                      "weight", "a float16, bfloat16, float32 or float64 tensor", type);
  GPUPRIM_CHECK_ARG(weight.dim() == 2, kOp, "weight", "2-D [num_embeddings, embedding_dim]",
                    std::to_string(weight.dim()) + "-D tensor");
  check_same_device(kOp, weight, "indices", indices);
  GPUPRIM_CHECK_DTYPE(is_index_type(indices.scalar_type()), kOp, "indices", "an int32 or int64 tensor",
                      indices.scalar_type());
  GPUPRIM_CHECK_ARG(indices.dim() == 1 || indices.dim() == 2, kOp, "indices", "1-D (with offsets) or 2-D (bags of "
                    "equal size, without offsets)", std::to_string(indices.dim()) + "-D tensor");
  if (indices.dim() == 2) {
    GPUPRIM_CHECK_ARG(!offsets.has_value(), kOp, "offsets", "None when indices is 2-D (each row is a bag)",
                      "a tensor");
  } else {
    GPUPRIM_CHECK_ARG(offsets.has_value(), kOp, "offsets", "given when indices is 1-D", "None");
    check_same_device(kOp, weight, "offsets", *offsets);
    GPUPRIM_CHECK_DTYPE(is_index_type(offsets->scalar_type()), kOp, "offsets", "an int32 or int64 tensor",
                        offsets->scalar_type());
    GPUPRIM_CHECK_ARG(offsets->dim() == 1, kOp, "offsets", "1-D", std::to_string(offsets->dim()) + "-D tensor");
    if (include_last_offset) {
      GPUPRIM_CHECK_ARG(offsets->sym_size(0) >= 1, kOp, "offsets",
                        "of length num_bags + 1 >= 1 with include_last_offset=True", offsets->sym_size(0));
    }
  }
  if (per_sample_weights.has_value()) {
    const at::Tensor& psw = *per_sample_weights;
    GPUPRIM_CHECK_ARG(op == EmbeddingBagMode::kSum, kOp, "per_sample_weights", "None unless mode='sum'",
                      "a tensor with mode='" + std::string(mode) + "'");
    check_same_device(kOp, weight, "per_sample_weights", psw);
    GPUPRIM_CHECK_DTYPE(psw.scalar_type() == type, kOp, "per_sample_weights", c10::str("of weight's dtype ", type),
                        psw.scalar_type());
    GPUPRIM_CHECK_ARG(psw.sym_sizes().equals(indices.sym_sizes()), kOp, "per_sample_weights",
                      c10::str("of indices' shape ", indices.sym_sizes()), psw.sym_sizes());
  }
  GPUPRIM_CHECK_ARG(!(sparse && op == EmbeddingBagMode::kMax), kOp, "sparse", "False with mode='max'", "True");
  GPUPRIM_CHECK_ARG(!(scale_grad_by_freq && op == EmbeddingBagMode::kMax), kOp, "scale_grad_by_freq",
                    "False with mode='max'", "True");
  int64_t padding = -1;
  if (padding_idx.has_value()) {
    const c10::SymInt rows = weight.sym_size(0);
    const int64_t p = *padding_idx;
    GPUPRIM_CHECK_ARG(rows > p && rows >= -p, kOp, "padding_idx", c10::str("in [-", rows, ", ", rows, ")"), p);
    if (p < 0) {
      // Counts from the end (as torch). Under symbolic shapes only non-negative values are accepted
      // (the Python wrapper wraps negative ones first).
      const std::optional<int64_t> known = weight.sym_size(0).maybe_as_int();
      GPUPRIM_CHECK_ARG(known.has_value(), kOp, "padding_idx", "non-negative under symbolic shapes", p);
      padding = p + *known;
    } else {
      padding = p;
    }
  }
  return {op, padding};
}

EmbeddingBagArgs embedding_bag_backward_check(const at::Tensor& grad, const at::Tensor& weight,
                                              const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
                                              const at::Tensor& bag_size, const at::Tensor& max_indices,
                                              const std::optional<at::Tensor>& per_sample_weights,
                                              c10::string_view mode, std::optional<int64_t> padding_idx,
                                              bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  constexpr const char* op = "embedding_bag_backward";
  const EmbeddingBagArgs args = embedding_bag_check(weight, indices, offsets, mode, per_sample_weights, padding_idx,
                                                    include_last_offset, sparse, scale_grad_by_freq);
  const c10::SymInt bags = embedding_bag_num_bags(indices, offsets, include_last_offset);
  check_same_device(op, weight, "grad", grad);
  GPUPRIM_CHECK_DTYPE(grad.scalar_type() == weight.scalar_type(), op, "grad",
                      c10::str("of weight's dtype ", weight.scalar_type()), grad.scalar_type());
  GPUPRIM_CHECK_ARG(grad.dim() == 2 && grad.sym_size(0) == bags && grad.sym_size(1) == weight.sym_size(1), op, "grad",
                    c10::str("of shape [num_bags, embedding_dim] = [", bags, ", ", weight.sym_size(1), "]"),
                    grad.sym_sizes());
  check_same_device(op, weight, "bag_size", bag_size);
  GPUPRIM_CHECK_DTYPE(bag_size.scalar_type() == at::kLong, op, "bag_size", "an int64 tensor", bag_size.scalar_type());
  GPUPRIM_CHECK_ARG(bag_size.dim() == 1 && bag_size.sym_size(0) == bags, op, "bag_size",
                    c10::str("of shape [num_bags] = [", bags, "]"), bag_size.sym_sizes());
  check_same_device(op, weight, "max_indices", max_indices);
  GPUPRIM_CHECK_DTYPE(max_indices.scalar_type() == at::kLong, op, "max_indices", "an int64 tensor",
                      max_indices.scalar_type());
  if (args.mode == EmbeddingBagMode::kMax) {
    GPUPRIM_CHECK_ARG(max_indices.dim() == 2 && max_indices.sym_size(0) == bags &&
                          max_indices.sym_size(1) == weight.sym_size(1),
                      op, "max_indices", c10::str("of shape [num_bags, embedding_dim] with mode='max'"),
                      max_indices.sym_sizes());
  }
  return args;
}

c10::SymInt embedding_bag_num_bags(const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
                                   bool include_last_offset) {
  if (indices.dim() == 2) return indices.sym_size(0);  // include_last_offset has no effect (as torch)
  return include_last_offset ? offsets->sym_size(0) - 1 : offsets->sym_size(0);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag_outputs(const at::Tensor& weight,
                                                                     const at::Tensor& indices,
                                                                     const std::optional<at::Tensor>& offsets,
                                                                     bool include_last_offset, EmbeddingBagMode mode) {
  const c10::SymInt bags = embedding_bag_num_bags(indices, offsets, include_last_offset);
  const auto long_options = indices.options().dtype(at::kLong);
  at::Tensor out = at::empty_symint({bags, weight.sym_size(1)}, weight.options());
  at::Tensor bag_size = at::empty_symint({bags}, long_options);
  at::Tensor max_indices = mode == EmbeddingBagMode::kMax ? at::empty_symint({bags, weight.sym_size(1)}, long_options)
                                                          : at::empty({0}, long_options);
  return {out, bag_size, max_indices};
}

at::Tensor embedding_bag_bounds(const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
                                bool include_last_offset) {
  const auto options = indices.options().dtype(at::kLong);
  if (indices.dim() == 2) {
    const int64_t bags = indices.size(0), length = indices.size(1);
    return at::arange(bags + 1, options).mul_(length);
  }
  const at::Tensor o = offsets->to(at::kLong);
  if (include_last_offset) return o.contiguous();
  return at::cat({o, at::full({1}, indices.numel(), options)});
}

void embedding_bag_check_data(const at::Tensor& indices, const std::vector<int64_t>& bounds, int64_t num_weights,
                              bool from_offsets, bool include_last_offset, InputOp op) {
  const int64_t nnz = indices.numel();
  if (from_offsets) {
    // The bounds are the offsets (then len(indices), without include_last_offset): name them as given.
    const int64_t given = include_last_offset ? int64_t(bounds.size()) : int64_t(bounds.size()) - 1;
    if (bounds[0] != 0) raise_input_error(op, InputArg::kOffsets, InputRule::kNonZeroStart, 0, bounds[0], 0);
    for (int64_t k = 1; k < given; ++k) {
      if (bounds[k] < bounds[k - 1]) {
        raise_input_error(op, InputArg::kOffsets, InputRule::kDecreasing, k, bounds[k], bounds[k - 1]);
      }
    }
    const int64_t last = bounds[given - 1];
    if (include_last_offset && last != nnz) {  // the last offset closes the last bag: it is len(indices)
      raise_input_error(op, InputArg::kOffsets, InputRule::kNotAtEnd, given - 1, last, nnz);
    }
    if (last > nnz) raise_input_error(op, InputArg::kOffsets, InputRule::kPastEnd, given - 1, last, nnz);
  }
  AT_DISPATCH_INDEX_TYPES(indices.scalar_type(), "gpuprim_embedding_bag_check", [&] {
    const at::Tensor idx = indices.contiguous().view(-1);
    const index_t* values = idx.const_data_ptr<index_t>();
    for (int64_t p = 0; p < nnz; ++p) {
      if (values[p] < 0 || values[p] >= num_weights) {
        raise_input_error(op, InputArg::kIndices, InputRule::kOutOfRange, p, values[p], num_weights, 0,
                          /*flattened=*/indices.dim() > 1);
      }
    }
  });
}

EmbeddingBagShape embedding_bag_shape(const at::Tensor& weight, const at::Tensor& indices, int64_t bags,
                                      int64_t padding_idx) {
  return {weight.size(0), weight.size(1), indices.numel(), bags, padding_idx};
}

}  // namespace gpuprim
