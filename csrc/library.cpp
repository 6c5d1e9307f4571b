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
  // ---- index_add / scatter_reduce (issue 7): torch's semantics, out of place. Every destination row sums
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
  // reduce: "sum", "mean" (integers round down), "amax", "amin" (NaN propagates); scatter_add is
  // scatter_reduce(..., "sum", include_self=True).
  m.def("scatter_reduce(Tensor input, int dim, Tensor index, Tensor src, str reduce=\"sum\", *,"
        " bool include_self=True, bool? deterministic=None) -> Tensor",
        tags);
  m.def("scatter_reduce_(Tensor(a!) input, int dim, Tensor index, Tensor src, str reduce=\"sum\", *,"
        " bool include_self=True, bool? deterministic=None) -> ()",
        tags);
  // Test-only: launch configuration of sum/mean (0 = automatic); results never depend on it.
  m.def("_set_reduce_config(int blocks, int threads) -> ()");
}
