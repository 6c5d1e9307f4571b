// gpuprim public C++ API. Each function calls its op through the PyTorch dispatcher, so
// autograd, CPU, CUDA and Meta kernels all apply exactly as from Python (torch.ops.gpuprim.*).
//
// Link with CMake: find_package(gpuprim) and target_link_libraries(app gpuprim::gpuprim).
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>
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

// Sum (mean) of floating x over dim (nullopt or {}: every dim), like torch.sum / torch.mean, rounded
// once from an exact, order-independent accumulation: bitwise identical on every run, launch
// configuration, input order and batch size, and between CPU and CUDA (always; no flag).
// dtype (floating) sets the output dtype; default: x's dtype.
at::Tensor sum(const at::Tensor& x, at::OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
               std::optional<at::ScalarType> dtype = std::nullopt);
at::Tensor mean(const at::Tensor& x, at::OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                std::optional<at::ScalarType> dtype = std::nullopt);

// (out, count): the elements of x (flattened row-major) where the bool mask (x's shape) is set,
// in order, followed by zeros (out has x.numel() elements); count is a 1-element int64 tensor on
// x's device. No host sync. Differentiable in floating x.
std::tuple<at::Tensor, at::Tensor> compact(const at::Tensor& x, const at::Tensor& mask);
// (unique, counts, num_runs) of 1-D x: runs of consecutive elements equal under == (NaN != NaN,
// -0.0 == +0.0), each run's first element and its int64 length, zero past the 1-element int64
// num_runs. No host sync; on CUDA x may have at most 2^31 - 1 elements. Not differentiable.
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_length_encode(const at::Tensor& x);

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
// scatter_reduce(input, dim, index, src, "sum", true, deterministic).
at::Tensor scatter_add(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                       std::optional<bool> deterministic = std::nullopt);

}  // namespace gpuprim
