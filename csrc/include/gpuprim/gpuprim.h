// gpuprim public C++ API. Each function calls its op through the PyTorch dispatcher, so
// autograd, CPU, CUDA and Meta kernels all apply exactly as from Python (torch.ops.gpuprim.*).
//
// Link with CMake: find_package(gpuprim) and target_link_libraries(app gpuprim::gpuprim).
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

namespace gpuprim {

// Prefix sum of x along dim (inclusive unless `exclusive`; from the end if `reverse`).
// Integer/bool inputs give int64; fp16/bf16 accumulate in fp32. Bitwise reproducible run to run.
at::Tensor cumsum(const at::Tensor& x, int64_t dim = -1, bool exclusive = false, bool reverse = false);

// (counts [num_bins], overflow [1]) for 1-D integer x: counts of each value in [0, num_bins)
// (int64, or float32/float64 sums of `weights`), and how many values fell outside (dropped).
// deterministic = nullopt follows at::globalContext().deterministicAlgorithms(); it matters
// only for floating-point weights on CUDA (integer counts are always exact).
std::tuple<at::Tensor, at::Tensor> bincount(const at::Tensor& x, int64_t num_bins,
                                            const std::optional<at::Tensor>& weights = std::nullopt,
                                            std::optional<bool> deterministic = std::nullopt);

// (counts [bins], overflow [1]): equal-width bins over [lo, hi) of x (any shape), as bincount's.
std::tuple<at::Tensor, at::Tensor> histogram(const at::Tensor& x, int64_t bins, double lo, double hi,
                                             const std::optional<at::Tensor>& weights = std::nullopt,
                                             std::optional<bool> deterministic = std::nullopt);

// Reduces the CSR segments offsets[s]:offsets[s+1] (1-D int32/int64, num_segments + 1 entries) of src along
// dim with reduce = "sum", "mean", "max" or "min": src's shape with sizes[dim] = num_segments. Empty segments
// give 0; max/min propagate NaN; fp16/bf16 accumulate in fp32. Differentiable in src (max/min: the gradient
// goes to the first arg-extreme row of each segment and column). Bitwise reproducible run to run.
at::Tensor segment_reduce(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce = "sum",
                          int64_t dim = 0);

// The gradient of segment_reduce with respect to src, given the output gradient and the forward result `out`.
at::Tensor segment_reduce_backward(const at::Tensor& grad, const at::Tensor& src, const at::Tensor& offsets,
                                   const at::Tensor& out, c10::string_view reduce, int64_t dim);
// (values, indices): x stably sorted along dim, ascending unless `descending`, with the int64
// positions along dim the values came from. NaN sorts above every number; -0.0 equals +0.0.
// Bitwise deterministic on every device. Differentiable in x (the gradient scatters back).
std::tuple<at::Tensor, at::Tensor> sort(const at::Tensor& x, int64_t dim = -1, bool descending = false);
// The values of sort(x, dim, descending) alone (one int32 / int64 row on CUDA: a keys-only radix sort).
at::Tensor sort_values(const at::Tensor& x, int64_t dim = -1, bool descending = false);

// (sorted keys, values): 1-D keys stably sorted (sort's order) and values' rows (first dim) moved
// with them. end_bit: integer keys promised in [0, 2^end_bit), so the high bits are skipped.
std::tuple<at::Tensor, at::Tensor> sort_pairs(const at::Tensor& keys, const at::Tensor& values,
                                              bool descending = false, std::optional<int64_t> end_bit = std::nullopt);

// Sum (mean) of floating x over dim (nullopt or {}: every dim), like torch.sum / torch.mean, rounded
// once from an exact, order-independent accumulation: bitwise identical on every run, launch
// configuration, input order and batch size, and between CPU and CUDA (always; no flag).
// dtype (floating) sets the output dtype; default: x's dtype.
at::Tensor sum(const at::Tensor& x, at::OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
               std::optional<at::ScalarType> dtype = std::nullopt);
at::Tensor mean(const at::Tensor& x, at::OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                std::optional<at::ScalarType> dtype = std::nullopt);

// (out, count): the elements of x (flattened row-major) where the bool mask (x's shape) is set,
// in order, followed by fill_value in x's dtype (nullopt: the tail is left unwritten; out has
// x.numel() elements); count is a 1-element int64 tensor on x's device. No host sync.
// Differentiable in floating x.
std::tuple<at::Tensor, at::Tensor> compact(const at::Tensor& x, const at::Tensor& mask,
                                           const std::optional<at::Scalar>& fill_value = at::Scalar(0));
// torch.masked_select(x, mask) with mask of x's shape: 1-D, exactly the kept elements. Syncs with the host
// (reads the count to size the output). Differentiable in floating x.
at::Tensor masked_select(const at::Tensor& x, const at::Tensor& mask);
// (unique, counts, num_runs) of 1-D x: runs of consecutive elements equal under == (NaN != NaN,
// -0.0 == +0.0), each run's first element and its int64 length, zero past the 1-element int64
// num_runs. No host sync; 64-bit sizes. Not differentiable. With dim (torch.unique_consecutive(dim=)), x of
// any rank: runs of equal consecutive slices x.select(dim, i) (equal when every element is); unique has x's
// shape (each run's first slice along dim, then zeros), counts [x.size(dim)].
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode(const at::Tensor& x,
                                                                 std::optional<int64_t> dim = std::nullopt);

// ---- MoE token routing ----
// (gates, expert_ids, counts, offsets, slots, token_ids, num_dropped): topk_gating's outputs, then
// moe_route_metadata's (gpuprim.Routing holds the same fields, expert_ids first).
using MoeRouting = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;
// Routes tokens to their top-k experts: topk_gating(logits [T, E], k, score, renormalize) gives gates (fp32 [T, k])
// and expert_ids (int64 [T, k]), then moe_route_metadata(expert_ids, gates, E, capacity, pad_to, drop) the rest.
// 1 <= k <= E. No host sync. Differentiable in logits (through gates).
MoeRouting moe_route(const at::Tensor& logits, int64_t k, c10::string_view score = "softmax", bool renormalize = true,
                     std::optional<int64_t> capacity = std::nullopt, int64_t pad_to = 1,
                     c10::string_view drop = "position", const std::optional<at::Tensor>& bias = std::nullopt,
                     std::optional<int64_t> num_groups = std::nullopt,
                     std::optional<int64_t> topk_groups = std::nullopt, double scaling = 1.0,
                     std::optional<at::ScalarType> gate_dtype = std::nullopt);
// Router losses from expert_ids [T, k] and scores [T, E]: kind "switch" (load balancing) or "z"; fp32 scalar.
at::Tensor moe_aux_loss(const at::Tensor& expert_ids, const at::Tensor& scores, int64_t num_experts,
                        c10::string_view kind = "switch", bool scores_are_logits = true);
// bias + rate * sign(mean(counts) - counts): the auxiliary-loss-free balancing step (rate finite and >= 0).
at::Tensor moe_update_bias(const at::Tensor& bias, const at::Tensor& counts, double rate);
// (counts [E], offsets [E + 1], slots [T, k], token_ids [R], num_dropped [1]), int64, from top-k expert ids
// [T, k] and their gates (compared for drop = "score"); see csrc/library.cpp. No host sync. Not differentiable.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> moe_route_metadata(
    const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts,
    std::optional<int64_t> capacity = std::nullopt, int64_t pad_to = 1, c10::string_view drop = "position");
// [R, H]: row r = hidden[token_ids[r]], zero where -1. Differentiable in hidden.
at::Tensor moe_permute(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots);
// [T, H]: out[t] = sum_j gates[t, j] * expert_out[slots[t, j]] (fp32 accumulation, order j). Differentiable in
// expert_out and gates.
at::Tensor moe_unpermute(const at::Tensor& expert_out, const at::Tensor& slots,
                         const std::optional<at::Tensor>& gates = std::nullopt);
// (grad_expert_out, grad_gates or [0]) of moe_unpermute.
std::tuple<at::Tensor, at::Tensor> moe_unpermute_backward(const at::Tensor& grad, const at::Tensor& expert_out,
                                                          const at::Tensor& slots,
                                                          const std::optional<at::Tensor>& gates, bool gates_grad);

// ---- topk ----
// (values, indices): the k largest (smallest if !largest) elements of x along dim, best first, with
// their int64 positions along dim. Ties: the lower index wins, in the selection and in the order;
// NaN ranks above +inf; -0.0 == +0.0. sorted=false returns the same order. 0 <= k <= size(dim).
// Deterministic, identical on CPU and CUDA. Differentiable in x (gradient scattered to the picks).
std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                                        bool sorted = true);
std::tuple<at::Tensor, at::Tensor> topk_symint(const at::Tensor& x, c10::SymInt k, int64_t dim = -1,
                                               bool largest = true, bool sorted = true);
// The gradient of topk: zeros of self_sizes with grad_values scattered to indices along dim.
at::Tensor topk_backward(const at::Tensor& grad_values, const at::Tensor& indices, c10::SymIntArrayRef self_sizes,
                         int64_t dim);

// ---- topk_gating ----
// (gates fp32 [T, k], expert_ids int64 [T, k]) of logits [T, E] (fp32/fp16/bf16): the k experts with the
// largest logits (ties -> lower index), best first; gates = softmax over all E (fp32) or sigmoid of
// their logits, divided by their sum if renormalize. Identical bits on CPU and CUDA. Differentiable in logits.
// bias [E] (selection only), num_groups / topk_groups (group-limited selection), scaling and gate_dtype: see
// csrc/library.cpp. With bias or groups, experts are ranked by score + bias.
std::tuple<at::Tensor, at::Tensor> topk_gating(const at::Tensor& logits, int64_t k, c10::string_view score = "softmax",
                                               bool renormalize = true,
                                               const std::optional<at::Tensor>& bias = std::nullopt,
                                               std::optional<int64_t> num_groups = std::nullopt,
                                               std::optional<int64_t> topk_groups = std::nullopt, double scaling = 1.0,
                                               std::optional<at::ScalarType> gate_dtype = std::nullopt);
// The gradient of topk_gating with respect to logits.
at::Tensor topk_gating_backward(const at::Tensor& grad_gates, const at::Tensor& logits, const at::Tensor& gates,
                                const at::Tensor& expert_ids, c10::string_view score, bool renormalize);

// ---- embedding_bag ----
// (out [num_bags, D], bag_size int64 [num_bags], max_indices int64 [num_bags, D] or [0]) as
// torch.nn.functional.embedding_bag (mode "sum", "mean" or "max"); see the schema in library.cpp.
// Differentiable in weight and per_sample_weights; sparse=true gives a sparse COO weight gradient;
// scale_grad_by_freq divides each row's gradient by its count in indices (not with mode "max", as torch).
// max_norm: first embedding_bag_renorm_(weight, indices, *max_norm, norm_type), as torch does.
std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag(
    const at::Tensor& weight, const at::Tensor& indices, const std::optional<at::Tensor>& offsets = std::nullopt,
    c10::string_view mode = "mean", const std::optional<at::Tensor>& per_sample_weights = std::nullopt,
    std::optional<int64_t> padding_idx = std::nullopt, bool include_last_offset = false, bool sparse = false,
    bool scale_grad_by_freq = false, std::optional<double> max_norm = std::nullopt, double norm_type = 2.0);
// torch.embedding_renorm_ under no_grad: the rows of weight that indices refer to whose norm_type-norm exceeds
// max_norm are scaled in place to max_norm / (norm + 1e-7) times themselves. ATen ops only, no host sync.
const at::Tensor& embedding_bag_renorm_(const at::Tensor& weight, const at::Tensor& indices, double max_norm,
                                        double norm_type = 2.0);
// (grad_weight, rows, num_rows, grad_per_sample_weights): the gradients of embedding_bag (deterministic).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_backward(
    const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& indices,
    const std::optional<at::Tensor>& offsets, const at::Tensor& bag_size, const at::Tensor& max_indices,
    const std::optional<at::Tensor>& per_sample_weights, c10::string_view mode, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq = false);

// ---- index_add / scatter_add / scatter_reduce (torch's semantics, out of place). deterministic = nullopt
// follows at::globalContext().deterministicAlgorithms(); on CUDA it selects the sorted, bitwise
// reproducible path (else sums use atomics). Differentiable as torch's (amax/amin: ties share the gradient).
at::Tensor index_add(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     const at::Scalar& alpha = 1, std::optional<bool> deterministic = std::nullopt);
// reduce: "sum", "mean", "amax" or "amin".
at::Tensor scatter_reduce(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce = "sum", bool include_self = true,
                          std::optional<bool> deterministic = std::nullopt);
// In-place variants (into input; not differentiable).
void index_add_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                const at::Scalar& alpha = 1, std::optional<bool> deterministic = std::nullopt);
void scatter_reduce_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                     c10::string_view reduce = "sum", bool include_self = true,
                     std::optional<bool> deterministic = std::nullopt);
// scatter_reduce(input, dim, index, src, "sum", true, deterministic), under its own name; and in place.
at::Tensor scatter_add(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                       std::optional<bool> deterministic = std::nullopt);
void scatter_add_(at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                  std::optional<bool> deterministic = std::nullopt);

// ---- unique and the static hash map ----
// torch.unique of x (flattened): (values, inverse, counts, num_unique), values and counts of capacity size
// (without one x.numel(), at most 256 for 1-byte dtypes), ascending; with size padded with fill_value (0 without
// one) and 0, without size unspecified past num_unique (narrow them to it); inverse (x's shape) and counts are
// empty unless asked for; num_unique (int64 [1], on x's device) the true count, which may exceed size. NaN last,
// each NaN distinct; -0.0 == +0.0. With size: no host sync (CUDA graphs). Without: CUDA int32 / int64 inputs of
// >= 2^22 elements may take the hash path, which syncs once. Not differentiable. With dim (torch.unique(dim=)):
// the slices x.select(dim, i) are the elements, in lexicographic order; values is x with dim's size made the
// capacity (padded with fill_value slices), inverse [x.size(dim)]; no host sync either way.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> unique(const at::Tensor& x, bool return_inverse = false,
                                                                   bool return_counts = false,
                                                                   std::optional<int64_t> size = std::nullopt,
                                                                   const std::optional<at::Scalar>& fill_value =
                                                                       std::nullopt,
                                                                   std::optional<int64_t> dim = std::nullopt);
// The hash map ops on a table of three tensors (see HashMap).
void hash_map_insert_(at::Tensor& keys, at::Tensor& values, at::Tensor& state, const at::Tensor& new_keys,
                      const at::Tensor& new_values);
at::Tensor hash_map_find(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                         const at::Tensor& queries, const at::Scalar& default_value = 0);
at::Tensor hash_map_contains(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                             const at::Tensor& queries);

// A static open-addressing GPU (or CPU) hash map from int32/int64 keys to int32/int64/float32/float64 values,
// as gpuprim.HashMap in Python: plain tensors (keys [capacity], values [capacity + 1], state [2] int64, size
// first; keys and values of one dtype interleaved in one buffer, else two tensors), so it saves with
// torch::save. Every key is allowed, the dtype's minimum too.
// Contents are deterministic (among equal keys of one insert the lowest position wins) and the same on CPU
// and CUDA; a full table raises (CUDA: at the next gpuprim call or check_errors()).
struct HashMap {
  at::Tensor keys, values, state;

  // An empty map of `capacity` slots (>= 1); keys and values of one dtype interleaved in one buffer, as in
  // Python.
  static HashMap empty(int64_t capacity, at::ScalarType key_dtype, at::ScalarType value_dtype,
                       const at::Device& device) {
    const at::Scalar free_key = key_dtype == at::kInt ? at::Scalar(std::numeric_limits<int32_t>::min())
                                                      : at::Scalar(std::numeric_limits<int64_t>::min());
    const at::Tensor state = at::zeros({2}, at::TensorOptions().dtype(at::kLong).device(device));
    if (key_dtype == value_dtype) {
      const at::Tensor slots = at::zeros({capacity + 1, 2}, at::TensorOptions().dtype(key_dtype).device(device));
      at::Tensor keys = slots.select(1, 0).narrow(0, 0, capacity);
      keys.fill_(free_key);
      return {keys, slots.select(1, 1), state};
    }
    return {at::full({capacity}, free_key, at::TensorOptions().dtype(key_dtype).device(device)),
            at::zeros({capacity + 1}, at::TensorOptions().dtype(value_dtype).device(device)), state};
  }
  // A map of capacity ceil(keys.numel() / load_factor) (0 < load_factor < 1) holding (keys, values).
  static HashMap build(const at::Tensor& keys, const at::Tensor& values, double load_factor = 0.5) {
    TORCH_CHECK_VALUE(load_factor > 0.0 && load_factor < 1.0,
                      "gpuprim.HashMap.build: load_factor must be in (0, 1), got ", load_factor);
    const auto capacity = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(keys.numel() / load_factor)));
    HashMap map = empty(capacity, keys.scalar_type(), values.scalar_type(), keys.device());
    map.insert(keys, values);
    return map;
  }
  void insert(const at::Tensor& new_keys, const at::Tensor& new_values) {
    hash_map_insert_(keys, values, state, new_keys, new_values);
  }
  at::Tensor find(const at::Tensor& queries, const at::Scalar& default_value = 0) const {
    return hash_map_find(keys, values, state, queries, default_value);
  }
  at::Tensor contains(const at::Tensor& queries) const { return hash_map_contains(keys, values, state, queries); }
  // The number of keys stored: a 1-element int64 tensor on the map's device (no sync).
  at::Tensor size() const { return state.narrow(0, 0, 1); }
  int64_t capacity() const { return keys.numel(); }
};

// ---- graphs (CSR: crow [rows + 1], col [nnz], int32 or int64 alike) ----
// [rows, F] (dense 1-D: [rows]) = the reduce ("sum", "mean", "max", "min") over each row's nonzeros k of
// values[k] * dense[col[k]] (values nullopt: ones); empty rows give 0. Bitwise reproducible, CPU == CUDA.
// Differentiable in values and dense for sum and mean.
at::Tensor spmm(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                const at::Tensor& dense, c10::string_view reduce = "sum");
// The gradient of spmm (sum/mean) with respect to values.
at::Tensor spmm_backward(const at::Tensor& grad, const at::Tensor& crow, const at::Tensor& col,
                         const at::Tensor& dense, c10::string_view reduce);
// (crow_t, col_t, perm): the transposed structure; values of the transpose are values.index_select(0, perm).
std::tuple<at::Tensor, at::Tensor, at::Tensor> csr_transpose(const at::Tensor& crow, const at::Tensor& col,
                                                             c10::SymInt num_cols);
// (distance int32 [V], parent int64 [V]) of a breadth-first search from the 1-D sources; -1 where unreached.
std::tuple<at::Tensor, at::Tensor> bfs(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& sources,
                                       std::optional<int64_t> max_depth = std::nullopt,
                                       c10::string_view direction = "auto", bool symmetric = false,
                                       std::optional<bool> deterministic = std::nullopt);

// Waits for every CUDA device on which a gpuprim kernel recorded bad input data (an index, offset or id out
// of range), then throws c10::IndexError naming the op, the argument, the position and the value of the first
// violation recorded since the last report. Without it, CUDA ops report such errors at their next call on that
// device, without a sync. Does nothing in a CPU-only build.
void check_errors();

}  // namespace gpuprim
