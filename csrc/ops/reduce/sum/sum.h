// gpuprim::sum and gpuprim::mean — declarations shared by their CPU, CUDA, Meta and Autograd files.
// Both ops live in this folder: mean is sum followed by one division, with the same kernels.
#pragma once
#include <ATen/ATen.h>
#include <optional>
#include <vector>

namespace gpuprim {

// The op's name in errors: mean, or sum. Each kernel file registers f<false> for sum and f<true> for mean.
constexpr const char* sum_op_name(bool mean) { return mean ? "mean" : "sum"; }

// What a sum/mean call reduces, checked without reading data.
struct SumPlan {
  std::vector<int64_t> permutation;  // kept dims (in order), then reduced dims (in order)
  std::vector<bool> reduced;         // per input dim
  int64_t kept_dims = 0;             // number of kept dims
  at::ScalarType out_dtype;
  // Integer path: exact int64 (wrapping) sums cast to out_dtype, for integral or bool outputs.
  bool integer = false;
  // torch's dtype= casts x first when x's kind differs from the output's: the dtype to cast x to.
  std::optional<at::ScalarType> cast_to;
};

// Validates x, dim (None or [] = every dim), and dtype, with torch.sum / torch.mean's dtype rules:
// sum of integral or bool x gives int64 (or dtype), mean needs a floating x or dtype.
SumPlan sum_check(const char* op, const at::Tensor& x, at::OptionalIntArrayRef dim,
                  std::optional<at::ScalarType> dtype);

// Output sizes (SymInt-safe, for Meta and autograd).
std::vector<c10::SymInt> sum_out_sizes(const at::Tensor& x, const SumPlan& plan, bool keepdim);

// The (uninitialized) output on x's device: sum_out_sizes, plan.out_dtype.
at::Tensor sum_output(const at::Tensor& x, const SumPlan& plan, bool keepdim);

// x cast as plan.cast_to says (x itself when no cast).
at::Tensor sum_input(const at::Tensor& x, const SumPlan& plan);

// x with the kept dims first and the reduced dims last, contiguous: a [rows, cols] matrix.
at::Tensor sum_as_rows(const at::Tensor& x, const SumPlan& plan, int64_t& rows, int64_t& cols);

// The test-only launch configuration knob (gpuprim._set_reduce_config): 0 = automatic.
// CUDA: grid size (blocks) and block size (threads, a multiple of 32). CPU: chunks per row and
// lanes (interleaved accumulators) per chunk, to simulate other chunkings. Results never depend on it.
struct ReduceConfig {
  int64_t blocks = 0;
  int64_t threads = 0;
};
ReduceConfig reduce_config();

}  // namespace gpuprim
