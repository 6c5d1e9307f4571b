// Every gpuprim schema, in one place: this block is the whole API surface.
// Implementations register per dispatch key next to their kernels (csrc/ops/<op>/).
#include <torch/library.h>

TORCH_LIBRARY(gpuprim, m) {
  const std::vector<at::Tag> tags{at::Tag::pt2_compliant_tag};

  // Inclusive (or exclusive) prefix sum along dim, optionally from the end. Integer and bool
  // inputs give int64; 16-bit floats accumulate in fp32. Bitwise reproducible run to run.
  m.def("cumsum(Tensor x, int dim=-1, *, bool exclusive=False, bool reverse=False) -> Tensor", tags);

  // Counts of the values of 1-D integer x in [0, num_bins), optionally weighted, plus the
  // number of values outside that range (dropped). Output size fixed by num_bins: no host sync.
  m.def("bincount(Tensor x, int num_bins, Tensor? weights=None, *, bool? deterministic=None)"
        " -> (Tensor counts, Tensor overflow)",
        tags);
  // bins equal-width bins over [lo, hi) of x (any shape, flattened): counts like bincount's (int64,
  // or sums of weights), values outside [lo, hi) and NaN dropped and counted in overflow. No host sync.
  m.def("histogram(Tensor x, int bins, float lo, float hi, Tensor? weights=None, *, bool? deterministic=None)"
        " -> (Tensor counts, Tensor overflow)",
        tags);

  // Reduction (sum, mean, max, min) of the CSR segments offsets[s]:offsets[s+1] of src along dim:
  // [..., num_segments, ...] with num_segments = len(offsets) - 1; empty segments give 0. Floating src
  // (fp16/bf16 accumulate in fp32); max/min propagate NaN. Bitwise reproducible run to run; no host sync.
  m.def("segment_reduce(Tensor src, Tensor offsets, str reduce=\"sum\", int dim=0) -> Tensor", tags);
  // Gradient of segment_reduce with respect to src (out: the forward result, used by max/min).
  m.def("segment_reduce_backward(Tensor grad, Tensor src, Tensor offsets, Tensor out, str reduce, int dim)"
        " -> Tensor",
        tags);
  // Stable sort along dim (ascending, or descending), NaN after every number (before, if
  // descending), -0.0 equal to +0.0. indices: int64 positions along dim. Deterministic.
  m.def("sort(Tensor x, int dim=-1, *, bool descending=False) -> (Tensor values, Tensor indices)", tags);
  // The values of sort(x, dim, descending) alone. One row of int32 / int64 (every other dim of size 1) takes a
  // keys-only radix sort on CUDA (no positions carried); anything else costs what sort costs.
  m.def("sort_values(Tensor x, int dim=-1, *, bool descending=False) -> Tensor", tags);
  // Stable sort of 1-D keys carrying values (rows along values' first dim) with them, in sort's
  // order. end_bit (integer keys in [0, 2^end_bit)) lets the radix sort skip the high bits.
  m.def("sort_pairs(Tensor keys, Tensor values, *, bool descending=False, int? end_bit=None)"
        " -> (Tensor keys, Tensor values)",
        tags);
  // Sum (or mean) over dim (None or []: every dim), rounded once from an order-independent exact
  // accumulation: bitwise identical on every run, launch configuration, input order, batch size,
  // and between CPU and CUDA. Floating inputs only; dtype (floating) sets the output dtype.
  m.def("sum(Tensor x, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", tags);
  m.def("mean(Tensor x, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", tags);
  // Stream compaction: the elements of x (flattened, row-major) where mask (bool, x's shape) is
  // set, in order, then fill_value (x's dtype; None: the tail is left unwritten, like torch.empty):
  // out has x.numel() elements, count (int64 [1]) says how many were kept.
  m.def("compact(Tensor x, Tensor mask, *, Scalar? fill_value=0) -> (Tensor out, Tensor count)", tags);
  // torch.masked_select(x, mask) for mask of x's shape: exactly the kept elements, so it SYNCS to size the
  // output (its fake kernel makes the size a data-dependent symbol); compact is the sync-free form.
  m.def("masked_select(Tensor x, Tensor mask) -> Tensor", tags);
  // Runs of equal (==) consecutive elements of 1-D x: unique (x's dtype and size) holds each run's
  // first element, counts (int64, x's size) its length, both zero past num_runs (int64 [1]).
  // dim (torch.unique_consecutive(dim=)): runs of equal consecutive slices x.select(dim, i) of x of any rank:
  // unique (x's shape) holds each run's first slice along dim, counts [x.size(dim)], both zero past num_runs.
  m.def("run_length_encode(Tensor x, *, int? dim=None) -> (Tensor unique, Tensor counts, Tensor num_runs)", tags);
  // ---- MoE token routing (moe_route, moe_route_metadata, moe_permute, moe_unpermute) ----
  // topk_gating(logits [T, E], k, score, renormalize) -> (gates, expert_ids), followed by moe_route_metadata(
  // expert_ids, gates, E, capacity, pad_to, drop) -> (counts, offsets, slots, token_ids, num_dropped): the fields
  // of gpuprim.Routing. 1 <= k <= E. A composite of the two ops (their kernels, autograd and fake kernels apply);
  // differentiable in logits through gates. No host sync.
  // bias, num_groups, topk_groups, scaling, gate_dtype: topk_gating's.
  m.def("moe_route(Tensor logits, int k, str score=\"softmax\", bool renormalize=True, int? capacity=None,"
        " int pad_to=1, str drop=\"position\", Tensor? bias=None, int? num_groups=None, int? topk_groups=None,"
        " float scaling=1.0, ScalarType? gate_dtype=None) -> (Tensor gates, Tensor expert_ids, Tensor counts,"
        " Tensor offsets, Tensor slots, Tensor token_ids, Tensor num_dropped)",
        tags);
  // Routing metadata from top-k expert choices [T, k] (gates [T, k] only compared, for drop="score"):
  // counts [E] kept per expert, offsets [E + 1] (each expert's block padded to a multiple of pad_to),
  // slots [T, k] row of each (token, choice) in the permuted buffer (-1: dropped), token_ids [R] source token
  // of each row (-1: padding), num_dropped [1]; all int64. R = T*k + E*(pad_to-1), or E*round_up(capacity,
  // pad_to) with a capacity: fixed by the arguments, no host sync. Rows of an expert in token order.
  m.def("moe_route_metadata(Tensor expert_ids, Tensor gates, int num_experts, int? capacity=None, int pad_to=1,"
        " str drop=\"position\") -> (Tensor counts, Tensor offsets, Tensor slots, Tensor token_ids,"
        " Tensor num_dropped)",
        tags);
  // [R, H]: row r is hidden[token_ids[r]], zero where token_ids[r] == -1. slots: for the backward (a
  // deterministic gather-sum of each token's k rows, which is moe_unpermute without gates).
  m.def("moe_permute(Tensor hidden, Tensor token_ids, Tensor slots) -> Tensor", tags);
  // [T, H]: out[t] = sum_j gates[t, j] * expert_out[slots[t, j]] in fp32 (fp64 for fp64), order j = 0..k-1,
  // dropped (-1) choices add nothing; gates None: weight 1. Bitwise deterministic, no host sync.
  m.def("moe_unpermute(Tensor expert_out, Tensor slots, Tensor? gates=None) -> Tensor", tags);
  // Gradients of moe_unpermute: (grad_expert_out [R, H], grad_gates [T, k] if gates_grad else [0]).
  // Router training losses, from the routing's expert_ids [T, k] and scores [T, E]. kind "switch": the load
  // balancing loss E * sum_e (tokens routed to e / T) * mean_t probs[t, e] (probs = softmax(scores) in fp32 if
  // scores_are_logits); kind "z": mean_t logsumexp(scores[t])^2 (scores are logits). fp32 scalar, no host sync,
  // differentiable in scores, deterministic.
  m.def("moe_aux_loss(Tensor expert_ids, Tensor scores, int num_experts, str kind=\"switch\","
        " bool scores_are_logits=True) -> Tensor",
        tags);
  // Auxiliary-loss-free balancing: bias + rate * sign(mean(counts) - counts) (counts [E] per expert, exact
  // integer comparison), bias's dtype. No host sync, not differentiable.
  m.def("moe_update_bias(Tensor bias, Tensor counts, float rate) -> Tensor", tags);
  m.def("moe_unpermute_backward(Tensor grad, Tensor expert_out, Tensor slots, Tensor? gates, bool gates_grad)"
        " -> (Tensor grad_expert_out, Tensor grad_gates)", tags);
  // ---- topk ----
  // The k largest (or smallest) elements along dim and their int64 positions, sorted best first.
  // Ties: the lower index wins (selection and order); NaN above +inf (so first if largest, last if
  // not); -0.0 == +0.0. sorted=False returns the same order as sorted=True. Deterministic.
  m.def("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True)"
        " -> (Tensor values, Tensor indices)",
        tags);
  // Gradient of topk: grad_values scattered to positions `indices` along dim of a zero tensor of self_sizes.
  m.def("topk_backward(Tensor grad_values, Tensor indices, SymInt[] self_sizes, int dim) -> Tensor", tags);
  // ---- topk_gating ----
  // MoE router: scores (softmax over all E in fp32, or sigmoid) of logits [T, E], the k best experts per
  // token (by logit, ties -> lower expert index) and their gates, optionally divided by their sum.
  // bias [E] (added to the scores for the selection only) or num_groups / topk_groups (keep the topk_groups
  // best of num_groups equal groups of experts by the sum of their top-2 biased scores, then the k best inside
  // them): experts ranked by score + bias in fp32 instead of by logit. Gates times scaling, in gate_dtype
  // (fp32 by default).
  m.def("topk_gating(Tensor logits, int k, str score=\"softmax\", bool renormalize=True, Tensor? bias=None,"
        " int? num_groups=None, int? topk_groups=None, float scaling=1.0, ScalarType? gate_dtype=None)"
        " -> (Tensor gates, Tensor expert_ids)",
        tags);
  // Gradient of topk_gating with respect to logits (fp32 math, logits' dtype).
  m.def("topk_gating_backward(Tensor grad_gates, Tensor logits, Tensor gates, Tensor expert_ids, str score,"
        " bool renormalize) -> Tensor",
        tags);
  // ---- embedding_bag ----
  // torch.nn.functional.embedding_bag: bags of rows of weight [num_embeddings, D] (fp16/bf16/fp32/fp64),
  // summed, averaged or max-reduced into out [num_bags, D]. indices int32/int64, 1-D with offsets (int32/int64,
  // bag starts; with include_last_offset also the end) or 2-D [num_bags, N] without. padding_idx and
  // out-of-range indices are skipped (not counted); empty bags give 0. Also returns what the backward needs:
  // bag_size (int64 [num_bags], used indices per bag) and max_indices (int64 [num_bags, D], the row of each
  // maximum, -1 for an empty bag; [0] unless mode='max'). sparse and scale_grad_by_freq (not with mode='max',
  // as torch) only shape the gradient. max_norm is torch's in-place renorm before the call (the wrappers').
  m.def("embedding_bag(Tensor weight, Tensor indices, Tensor? offsets=None, str mode=\"mean\", "
        "Tensor? per_sample_weights=None, int? padding_idx=None, bool include_last_offset=False, bool sparse=False, "
        "bool scale_grad_by_freq=False) -> (Tensor out, Tensor bag_size, Tensor max_indices)",
        tags);
  // Gradients of embedding_bag from grad [num_bags, D]: grad_weight (dense [num_embeddings, D]; with sparse,
  // [len(indices), D] rows for the distinct rows `rows` (int64 [len(indices)], sorted; zero past num_rows));
  // num_rows (int64 [1], distinct rows that got gradient; 0 for max); grad_per_sample_weights (per_sample_weights'
  // shape, [0] without). scale_grad_by_freq divides row r's gradient by r's count among the used indices.
  // Sort + segmented reduce: bitwise identical on every run, no float atomics.
  m.def("embedding_bag_backward(Tensor grad, Tensor weight, Tensor indices, Tensor? offsets, Tensor bag_size, "
        "Tensor max_indices, Tensor? per_sample_weights, str mode, int? padding_idx, bool include_last_offset, "
        "bool sparse, bool scale_grad_by_freq=False) -> (Tensor grad_weight, Tensor rows, Tensor num_rows, "
        "Tensor grad_per_sample_weights)",
        tags);
  // ---- index_add / scatter_reduce: torch's semantics, out of place. Every destination row sums
  // (reduces) its source rows in Acc (fp32 for fp16/bf16/fp32, fp64, int64 for integers), then is finalized
  // once. deterministic (None: torch's flag) on CUDA: sorted destinations + segmented reduce, bitwise
  // identical run to run; otherwise sums use atomics. Out-of-range indices: IndexError on the CPU; skipped
  // on CUDA (gpuprim.set_validate raises). No host sync on CUDA.
  m.def("index_add(Tensor input, int dim, Tensor index, Tensor source, *, Scalar alpha=1,"
        " bool? deterministic=None) -> Tensor",
        tags);
  // In place into input (returns nothing: the Python wrapper returns input). Not differentiable.
  m.def("index_add_(Tensor(a!) input, int dim, Tensor index, Tensor source, *, Scalar alpha=1,"
        " bool? deterministic=None) -> ()",
        tags);
  // reduce: "sum", "mean" (integers round down), "amax", "amin" (NaN propagates).
  m.def("scatter_reduce(Tensor input, int dim, Tensor index, Tensor src, str reduce=\"sum\", *,"
        " bool include_self=True, bool? deterministic=None) -> Tensor",
        tags);
  m.def("scatter_reduce_(Tensor(a!) input, int dim, Tensor index, Tensor src, str reduce=\"sum\", *,"
        " bool include_self=True, bool? deterministic=None) -> ()",
        tags);
  // scatter_reduce(..., "sum", include_self=True), under its own name (so that its errors name it).
  m.def("scatter_add(Tensor input, int dim, Tensor index, Tensor src, *, bool? deterministic=None) -> Tensor", tags);
  m.def("scatter_add_(Tensor(a!) input, int dim, Tensor index, Tensor src, *, bool? deterministic=None) -> ()",
        tags);
  // ---- hash: unique and the static hash map ----
  // torch.unique of x (flattened), ascending, NaN last and each NaN distinct, -0.0 == +0.0: values (x's dtype)
  // and counts (int64; empty unless return_counts) of capacity size (without one x.numel(), at most 256 for
  // 1-byte dtypes), with size padded with fill_value (0 without one) and 0, without it unspecified past
  // num_unique (not written: the exact form's reader slices); inverse (int64, x's shape; empty unless
  // return_inverse) each element's rank; num_unique (int64 [1]) the true count, which may exceed size (the excess
  // is dropped). With size: no host sync. Without: CUDA int32/int64 inputs of >= 2^22 elements may take the hash
  // path, which syncs once.
  // dim (torch.unique(dim=)): the slices x.select(dim, i) are the elements, in lexicographic order (a slice with a
  // NaN equals no other); values is x with dim's size made the capacity (padded with fill_value slices), inverse
  // [x.size(dim)]; never the hash path.
  m.def(
      "unique(Tensor x, *, bool return_inverse=False, bool return_counts=False, int? size=None,"
      " Scalar? fill_value=None, int? dim=None) -> (Tensor values, Tensor inverse, Tensor counts, Tensor num_unique)",
      tags);
  // A static open-addressing hash map held in three tensors: keys [C] (int32/int64, the dtype's minimum marks a
  // free slot), values [C + 1] (int32/int64/float32/float64; the last belongs to the key equal to that minimum)
  // and state [2] int64 (size, whether the minimum key is stored). Insert-or-assign; among equal keys of one
  // call the lowest position wins. A full table is an error (CPU: at the call; CUDA: at the next call).
  m.def("hash_map_insert_(Tensor(a!) keys, Tensor(b!) values, Tensor(c!) state, Tensor new_keys,"
        " Tensor new_values) -> ()",
        tags);
  // The value of each query (queries' shape), default_value where absent.
  m.def("hash_map_find(Tensor keys, Tensor values, Tensor state, Tensor queries, Scalar default_value=0) -> Tensor",
        tags);
  // Whether each query is stored (bool, queries' shape).
  m.def("hash_map_contains(Tensor keys, Tensor values, Tensor state, Tensor queries) -> Tensor", tags);

  // ---- graphs: CSR matrices (crow [rows + 1], col [nnz], int32 or int64 alike) ----
  // [rows, F] (dense 1-D: [rows]) = the reduce ("sum", "mean", "max", "min") over each row's nonzeros k of
  // values[k] * dense[col[k]] (values None: ones); empty rows give 0; fp16/bf16 accumulate in fp32. Merge-path
  // order with fused multiply-adds: bitwise reproducible and equal on CPU and CUDA. No host sync.
  m.def("spmm(Tensor crow, Tensor col, Tensor? values, Tensor dense, str reduce=\"sum\") -> Tensor", tags);
  // Gradient of spmm (sum/mean) with respect to values: per nonzero, grad[row] . dense[col] (mean: / length).
  m.def("spmm_backward(Tensor grad, Tensor crow, Tensor col, Tensor dense, str reduce) -> Tensor", tags);
  // The transposed structure (crow_t [num_cols + 1], col_t [nnz], perm [nnz] int64: values_t = values[perm]),
  // each row of the transpose in increasing row order. Exact integers, equal on CPU and CUDA; no host sync.
  m.def("csr_transpose(Tensor crow, Tensor col, SymInt num_cols) -> (Tensor crow_t, Tensor col_t, Tensor perm)",
        tags);
  // Breadth-first search from 1-D sources over the graph's out-edges: (distance int32 [V], parent int64 [V]),
  // -1 where unreached (or past max_depth); a source's parent is itself. direction: "auto" (push/pull switched
  // on the device by the frontier's edge count), "top_down" or "bottom_up". symmetric: the graph is its own
  // transpose (the pull direction then reads it; otherwise the op transposes it). Distances are deterministic;
  // parents are the smallest-id neighbour one level closer when deterministic (None: torch's flag), any such
  // neighbour otherwise. CUDA reads a termination flag once per batch of levels (one sync for most graphs).
  m.def("bfs(Tensor crow, Tensor col, Tensor sources, *, int? max_depth=None, str direction=\"auto\","
        " bool symmetric=False, bool? deterministic=None) -> (Tensor distance, Tensor parent)",
        tags);
  // Waits for every device a gpuprim kernel has recorded bad input on, then raises IndexError (Python:
  // gpuprim.InputError) for the first violation recorded since the last report; CUDA ops otherwise report it
  // at their next call on that device, without a sync. Does nothing in a CPU-only build.
  m.def("check_errors() -> ()");
  // Test-only: launch configuration of sum/mean (0 = automatic); results never depend on it.
  m.def("_set_reduce_config(int blocks, int threads) -> ()");
}
