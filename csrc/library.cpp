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
  // Sum (or mean) over dim (None or []: every dim), rounded once from an order-independent exact
  // accumulation: bitwise identical on every run, launch configuration, input order, batch size,
  // and between CPU and CUDA. Floating inputs only; dtype (floating) sets the output dtype.
  m.def("sum(Tensor x, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", tags);
  m.def("mean(Tensor x, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", tags);
  // Stream compaction: the elements of x (flattened, row-major) where mask (bool, x's shape) is
  // set, in order, then zeros: out has x.numel() elements, count (int64 [1]) says how many were kept.
  m.def("compact(Tensor x, Tensor mask) -> (Tensor out, Tensor count)", tags);
  // Runs of equal (==) consecutive elements of 1-D x: unique (x's dtype and size) holds each run's
  // first element, counts (int64, x's size) its length, both zero past num_runs (int64 [1]).
  m.def("run_length_encode(Tensor x) -> (Tensor unique, Tensor counts, Tensor num_runs)", tags);
  // ---- embedding_bag (issue #5) ----
  // torch.nn.functional.embedding_bag: bags of rows of weight [num_embeddings, D] (fp16/bf16/fp32/fp64),
  // summed, averaged or max-reduced into out [num_bags, D]. indices int32/int64, 1-D with offsets (int32/int64,
  // bag starts; with include_last_offset also the end) or 2-D [num_bags, N] without. padding_idx and
  // out-of-range indices are skipped (not counted); empty bags give 0. Also returns what the backward needs:
  // bag_size (int64 [num_bags], used indices per bag) and max_indices (int64 [num_bags, D], the row of each
  // maximum, -1 for an empty bag; [0] unless mode='max'). sparse only selects the gradient's layout.
  m.def("embedding_bag(Tensor weight, Tensor indices, Tensor? offsets=None, str mode=\"mean\", "
        "Tensor? per_sample_weights=None, int? padding_idx=None, bool include_last_offset=False, bool sparse=False)"
        " -> (Tensor out, Tensor bag_size, Tensor max_indices)",
        tags);
  // Gradients of embedding_bag from grad [num_bags, D]: grad_weight (dense [num_embeddings, D]; with sparse,
  // [len(indices), D] rows for the distinct rows `rows` (int64 [len(indices)], sorted; zero past num_rows));
  // num_rows (int64 [1], distinct rows that got gradient; 0 for max); grad_per_sample_weights (per_sample_weights'
  // shape, [0] without). Sort + segmented reduce: bitwise identical on every run, no float atomics.
  m.def("embedding_bag_backward(Tensor grad, Tensor weight, Tensor indices, Tensor? offsets, Tensor bag_size, "
        "Tensor max_indices, Tensor? per_sample_weights, str mode, int? padding_idx, bool include_last_offset, "
        "bool sparse) -> (Tensor grad_weight, Tensor rows, Tensor num_rows, Tensor grad_per_sample_weights)",
        tags);
  // Test-only: launch configuration of sum/mean (0 = automatic); results never depend on it.
  m.def("_set_reduce_config(int blocks, int threads) -> ()");
}
