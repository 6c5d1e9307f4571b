// The C++ API (include/gpuprim/gpuprim.h): typed dispatcher handles, looked up once.
#include <ATen/core/dispatch/Dispatcher.h>

#include "include/gpuprim/gpuprim.h"

namespace gpuprim {

template <typename Signature>
static c10::TypedOperatorHandle<Signature> find_op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

at::Tensor cumsum(const at::Tensor& x, int64_t dim, bool exclusive, bool reverse) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, bool, bool)>("gpuprim::cumsum");
  return op.call(x, dim, exclusive, reverse);
}

std::tuple<at::Tensor, at::Tensor> bincount(const at::Tensor& x, int64_t num_bins,
                                            const std::optional<at::Tensor>& weights,
                                            std::optional<bool> deterministic) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, const std::optional<at::Tensor>&,
                                                 std::optional<bool>)>("gpuprim::bincount");
  return op.call(x, num_bins, weights, deterministic);
}

std::tuple<at::Tensor, at::Tensor> histogram(const at::Tensor& x, int64_t bins, double lo, double hi,
                                             const std::optional<at::Tensor>& weights,
                                             std::optional<bool> deterministic) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, double, double,
                                                 const std::optional<at::Tensor>&, std::optional<bool>)>(
          "gpuprim::histogram");
  return op.call(x, bins, lo, hi, weights, deterministic);
}

at::Tensor segment_reduce(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce, int64_t dim) {
  static const auto op =
      find_op<at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view, int64_t)>("gpuprim::segment_reduce");
  return op.call(src, offsets, reduce, dim);
}

at::Tensor segment_reduce_backward(const at::Tensor& grad, const at::Tensor& src, const at::Tensor& offsets,
                                   const at::Tensor& out, c10::string_view reduce, int64_t dim) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                            c10::string_view, int64_t)>("gpuprim::segment_reduce_backward");
  return op.call(grad, src, offsets, out, reduce, dim);
}

std::tuple<at::Tensor, at::Tensor> sort(const at::Tensor& x, int64_t dim, bool descending) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, int64_t, bool)>("gpuprim::sort");
  return op.call(x, dim, descending);
}

at::Tensor sort_values(const at::Tensor& x, int64_t dim, bool descending) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, bool)>("gpuprim::sort_values");
  return op.call(x, dim, descending);
}

std::tuple<at::Tensor, at::Tensor> sort_pairs(const at::Tensor& keys, const at::Tensor& values, bool descending,
                                              std::optional<int64_t> end_bit) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, bool, std::optional<int64_t>)>(
          "gpuprim::sort_pairs");
  return op.call(keys, values, descending, end_bit);
}

at::Tensor sum(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                            std::optional<at::ScalarType>)>("gpuprim::sum");
  return op.call(x, dim, keepdim, dtype);
}

at::Tensor mean(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                                            std::optional<at::ScalarType>)>("gpuprim::mean");
  return op.call(x, dim, keepdim, dtype);
}

std::tuple<at::Tensor, at::Tensor> compact(const at::Tensor& x, const at::Tensor& mask,
                                           const std::optional<at::Scalar>& fill_value) {
  static const auto op = find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                    const std::optional<at::Scalar>&)>("gpuprim::compact");
  return op.call(x, mask, fill_value);
}

at::Tensor masked_select(const at::Tensor& x, const at::Tensor& mask) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&)>("gpuprim::masked_select");
  return op.call(x, mask);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode(const at::Tensor& x, std::optional<int64_t> dim) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&, std::optional<int64_t>)>(
          "gpuprim::run_length_encode");
  return op.call(x, dim);
}

// ---- MoE token routing ----
MoeRouting moe_route(const at::Tensor& logits, int64_t k, c10::string_view score, bool renormalize,
                     std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop,
                     const std::optional<at::Tensor>& bias, std::optional<int64_t> num_groups,
                     std::optional<int64_t> topk_groups, double scaling, std::optional<at::ScalarType> gate_dtype) {
  static const auto op =
      find_op<MoeRouting(const at::Tensor&, int64_t, c10::string_view, bool, std::optional<int64_t>, int64_t,
                         c10::string_view, const std::optional<at::Tensor>&, std::optional<int64_t>,
                         std::optional<int64_t>, double, std::optional<at::ScalarType>)>("gpuprim::moe_route");
  return op.call(logits, k, score, renormalize, capacity, pad_to, drop, bias, num_groups, topk_groups, scaling,
                 gate_dtype);
}

at::Tensor moe_aux_loss(const at::Tensor& expert_ids, const at::Tensor& scores, int64_t num_experts,
                        c10::string_view kind, bool scores_are_logits) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, int64_t, c10::string_view, bool)>(
      "gpuprim::moe_aux_loss");
  return op.call(expert_ids, scores, num_experts, kind, scores_are_logits);
}

at::Tensor moe_update_bias(const at::Tensor& bias, const at::Tensor& counts, double rate) {
  static const auto op =
      find_op<at::Tensor(const at::Tensor&, const at::Tensor&, double)>("gpuprim::moe_update_bias");
  return op.call(bias, counts, rate);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> moe_route_metadata(
    const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts, std::optional<int64_t> capacity,
    int64_t pad_to, c10::string_view drop) {
  static const auto op = find_op<std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, int64_t, std::optional<int64_t>, int64_t, c10::string_view)>(
      "gpuprim::moe_route_metadata");
  return op.call(expert_ids, gates, num_experts, capacity, pad_to, drop);
}

at::Tensor moe_permute(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots) {
  static const auto op =
      find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>("gpuprim::moe_permute");
  return op.call(hidden, token_ids, slots);
}

at::Tensor moe_unpermute(const at::Tensor& expert_out, const at::Tensor& slots,
                         const std::optional<at::Tensor>& gates) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&)>(
      "gpuprim::moe_unpermute");
  return op.call(expert_out, slots, gates);
}

std::tuple<at::Tensor, at::Tensor> moe_unpermute_backward(const at::Tensor& grad, const at::Tensor& expert_out,
                                                          const at::Tensor& slots,
                                                          const std::optional<at::Tensor>& gates, bool gates_grad) {
  static const auto op = find_op<std::tuple<at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, bool)>(
      "gpuprim::moe_unpermute_backward");
  return op.call(grad, expert_out, slots, gates, gates_grad);
}

// ---- topk ----
std::tuple<at::Tensor, at::Tensor> topk_symint(const at::Tensor& x, c10::SymInt k, int64_t dim, bool largest,
                                               bool sorted) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, c10::SymInt, int64_t, bool, bool)>("gpuprim::topk");
  return op.call(x, std::move(k), dim, largest, sorted);
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  return gpuprim::topk_symint(x, c10::SymInt(k), dim, largest, sorted);
}

at::Tensor topk_backward(const at::Tensor& grad_values, const at::Tensor& indices, c10::SymIntArrayRef self_sizes,
                         int64_t dim) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, c10::SymIntArrayRef, int64_t)>(
      "gpuprim::topk_backward");
  return op.call(grad_values, indices, self_sizes, dim);
}

// ---- topk_gating ----
std::tuple<at::Tensor, at::Tensor> topk_gating(const at::Tensor& logits, int64_t k, c10::string_view score,
                                               bool renormalize, const std::optional<at::Tensor>& bias,
                                               std::optional<int64_t> num_groups, std::optional<int64_t> topk_groups,
                                               double scaling, std::optional<at::ScalarType> gate_dtype) {
  static const auto op = find_op<std::tuple<at::Tensor, at::Tensor>(
      const at::Tensor&, int64_t, c10::string_view, bool, const std::optional<at::Tensor>&, std::optional<int64_t>,
      std::optional<int64_t>, double, std::optional<at::ScalarType>)>("gpuprim::topk_gating");
  return op.call(logits, k, score, renormalize, bias, num_groups, topk_groups, scaling, gate_dtype);
}

at::Tensor topk_gating_backward(const at::Tensor& grad_gates, const at::Tensor& logits, const at::Tensor& gates,
                                const at::Tensor& expert_ids, c10::string_view score, bool renormalize) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                            const at::Tensor&, c10::string_view, bool)>(
      "gpuprim::topk_gating_backward");
  return op.call(grad_gates, logits, gates, expert_ids, score, renormalize);
}

// ---- embedding_bag ----
std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag(
    const at::Tensor& weight, const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
    c10::string_view mode, const std::optional<at::Tensor>& per_sample_weights, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq, std::optional<double> max_norm,
    double norm_type) {
  static const auto op = find_op<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, c10::string_view,
      const std::optional<at::Tensor>&, std::optional<int64_t>, bool, bool, bool)>("gpuprim::embedding_bag");
  if (max_norm.has_value()) embedding_bag_renorm_(weight, indices, *max_norm, norm_type);
  return op.call(weight, indices, offsets, mode, per_sample_weights, padding_idx, include_last_offset, sparse,
                 scale_grad_by_freq);
}

// The same composition as the Python wrapper's: every looked-up row (duplicates included: they compute and
// write the same values, so the result is one renorm per row) in one gather, norm, scale and scatter.
const at::Tensor& embedding_bag_renorm_(const at::Tensor& weight, const at::Tensor& indices, double max_norm,
                                        double norm_type) {
  const at::NoGradGuard no_grad;
  const int64_t rows = weight.size(0);
  if (indices.numel() == 0 || rows == 0 || weight.dim() != 2) return weight;  // the op reports bad shapes
  // Out-of-range indices are an error the op reports; clamped here so that the gather stays in bounds.
  const at::Tensor idx = indices.reshape({-1}).to(at::kLong).clamp(0, rows - 1);
  const at::ScalarType acc = weight.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor picked = weight.detach().index_select(0, idx);
  const int64_t row_dim[] = {1};
  const at::Tensor norms = at::linalg_vector_norm(picked, norm_type, row_dim, false, acc).to(at::kDouble);
  const at::Tensor scale = at::where(norms > max_norm, at::full_like(norms, max_norm).div_(norms + 1e-7), 1.0);
  weight.detach().index_copy_(0, idx, picked.to(acc).mul_(scale.to(acc).unsqueeze(1)).to(weight.scalar_type()));
  return weight;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_backward(
    const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& indices,
    const std::optional<at::Tensor>& offsets, const at::Tensor& bag_size, const at::Tensor& max_indices,
    const std::optional<at::Tensor>& per_sample_weights, c10::string_view mode, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  static const auto op = find_op<std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, const at::Tensor&,
      const at::Tensor&, const std::optional<at::Tensor>&, c10::string_view, std::optional<int64_t>, bool, bool,
      bool)>("gpuprim::embedding_bag_backward");
  return op.call(grad, weight, indices, offsets, bag_size, max_indices, per_sample_weights, mode, padding_idx,
                 include_last_offset, sparse, scale_grad_by_freq);
}

at::Tensor index_add(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     const at::Scalar& alpha, std::optional<bool> deterministic) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                            const at::Scalar&, std::optional<bool>)>("gpuprim::index_add");
  return op.call(input, dim, index, source, alpha, deterministic);
}

at::Tensor scatter_reduce(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                            c10::string_view, bool, std::optional<bool>)>("gpuprim::scatter_reduce");
  return op.call(input, dim, index, src, reduce, include_self, deterministic);
}

void index_add_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                const at::Scalar& alpha, std::optional<bool> deterministic) {
  static const auto op = find_op<void(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                      const at::Scalar&, std::optional<bool>)>("gpuprim::index_add_");
  op.call(input, dim, index, source, alpha, deterministic);
}

void scatter_reduce_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                     c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
  static const auto op = find_op<void(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                      c10::string_view, bool, std::optional<bool>)>("gpuprim::scatter_reduce_");
  op.call(input, dim, index, src, reduce, include_self, deterministic);
}

at::Tensor scatter_add(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                       std::optional<bool> deterministic) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                            std::optional<bool>)>("gpuprim::scatter_add");
  return op.call(input, dim, index, src, deterministic);
}

void scatter_add_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                  std::optional<bool> deterministic) {
  static const auto op = find_op<void(const at::Tensor&, int64_t, const at::Tensor&, const at::Tensor&,
                                      std::optional<bool>)>("gpuprim::scatter_add_");
  op.call(input, dim, index, src, deterministic);
}

// ---- unique and the static hash map ----
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique(const at::Tensor& x, bool return_inverse,
                                                                   bool return_counts, std::optional<int64_t> size,
                                                                   const std::optional<at::Scalar>& fill_value,
                                                                   std::optional<int64_t> dim) {
  static const auto op = find_op<std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>(
      const at::Tensor&, bool, bool, std::optional<int64_t>, const std::optional<at::Scalar>&,
      std::optional<int64_t>)>("gpuprim::unique");
  return op.call(x, return_inverse, return_counts, size, fill_value, dim);
}

void hash_map_insert_(at::Tensor& keys, at::Tensor& values, at::Tensor& state, const at::Tensor& new_keys,
                      const at::Tensor& new_values) {
  static const auto op = find_op<void(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                      const at::Tensor&)>("gpuprim::hash_map_insert_");
  op.call(keys, values, state, new_keys, new_values);
}

at::Tensor hash_map_find(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                         const at::Tensor& queries, const at::Scalar& default_value) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                            const at::Tensor&, const at::Scalar&)>("gpuprim::hash_map_find");
  return op.call(keys, values, state, queries, default_value);
}

at::Tensor hash_map_contains(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                             const at::Tensor& queries) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                            const at::Tensor&)>("gpuprim::hash_map_contains");
  return op.call(keys, values, state, queries);
}

// ---- graphs ----
at::Tensor spmm(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                const at::Tensor& dense, c10::string_view reduce) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                            const at::Tensor&, c10::string_view)>("gpuprim::spmm");
  return op.call(crow, col, values, dense, reduce);
}

at::Tensor spmm_backward(const at::Tensor& grad, const at::Tensor& crow, const at::Tensor& col,
                         const at::Tensor& dense, c10::string_view reduce) {
  static const auto op = find_op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                            const at::Tensor&, c10::string_view)>("gpuprim::spmm_backward");
  return op.call(grad, crow, col, dense, reduce);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose(const at::Tensor& crow, const at::Tensor& col,
                                                             c10::SymInt num_cols) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, c10::SymInt)>(
          "gpuprim::csr_transpose");
  return op.call(crow, col, std::move(num_cols));
}

std::tuple<at::Tensor, at::Tensor> bfs(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& sources,
                                       std::optional<int64_t> max_depth, c10::string_view direction, bool symmetric,
                                       std::optional<bool> deterministic) {
  static const auto op =
      find_op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                 std::optional<int64_t>, c10::string_view, bool,
                                                 std::optional<bool>)>("gpuprim::bfs");
  return op.call(crow, col, sources, max_depth, direction, symmetric, deterministic);
}

void check_errors() {
  static const auto op = find_op<void()>("gpuprim::check_errors");
  op.call();
}

}  // namespace gpuprim
