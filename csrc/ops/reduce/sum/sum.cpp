// gpuprim::sum and gpuprim::mean's device-independent part: the argument checks and shape rules every kernel of
// the ops uses, and the test-only launch configuration knob.
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <string_view>

#include "common/torch_utils.h"
#include "ops/reduce/sum/sum.h"

namespace gpuprim {

namespace {
std::atomic<int64_t> config_blocks{0}, config_threads{0};
}  // namespace

ReduceConfig reduce_config() { return ReduceConfig{config_blocks.load(), config_threads.load()}; }

SumPlan sum_check(const char* op, const at::Tensor& x, at::OptionalIntArrayRef dim,
                  std::optional<at::ScalarType> dtype) {
  const auto is_float = [](at::ScalarType t) {
    return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
  };
  const auto is_integer = [](at::ScalarType t) {
    return t == at::kBool || t == at::kByte || t == at::kChar || t == at::kShort || t == at::kInt || t == at::kLong;
  };
  const bool mean = std::string_view(op) == "mean";
  const at::ScalarType in = x.scalar_type();
  GPUPRIM_CHECK_DTYPE(is_float(in) || is_integer(in), op, "x",
                      "a float16, bfloat16, float32, float64, (u)int8, int16, int32, int64 or bool tensor", in);
  GPUPRIM_CHECK_DTYPE(!mean || is_float(in) || (dtype.has_value() && is_float(*dtype)), op, "x",
                      "floating (or dtype given, floating) as torch.mean requires", in);
  SumPlan plan;
  plan.out_dtype = dtype.value_or(is_integer(in) ? at::kLong : in);
  if (mean) {
    GPUPRIM_CHECK_DTYPE(is_float(plan.out_dtype), op, "dtype", "float16, bfloat16, float32 or float64",
                        plan.out_dtype);
  } else {
    GPUPRIM_CHECK_DTYPE(is_float(plan.out_dtype) || is_integer(plan.out_dtype), op, "dtype",
                        "float16, bfloat16, float32, float64, (u)int8, int16, int32, int64 or bool", plan.out_dtype);
  }
  plan.integer = is_integer(plan.out_dtype);
  if (is_integer(in) != plan.integer) plan.cast_to = plan.out_dtype;
  const int64_t ndim = x.dim();
  plan.reduced.assign(std::max<int64_t>(ndim, 0), false);
  if (!dim.has_value() || dim->empty()) {
    std::fill(plan.reduced.begin(), plan.reduced.end(), true);
  } else {
    for (const int64_t d : *dim) {
      const int64_t wrapped = wrap_dim(op, "dim", d, ndim);
      if (ndim == 0) continue;
      GPUPRIM_CHECK_ARG(!plan.reduced[wrapped], op, "dim", "a list of distinct dims", *dim);
      plan.reduced[wrapped] = true;
    }
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (!plan.reduced[d]) plan.permutation.push_back(d);
  }
  plan.kept_dims = int64_t(plan.permutation.size());
  for (int64_t d = 0; d < ndim; ++d) {
    if (plan.reduced[d]) plan.permutation.push_back(d);
  }
  return plan;
}

std::vector<c10::SymInt> sum_out_sizes(const at::Tensor& x, const SumPlan& plan, bool keepdim) {
  std::vector<c10::SymInt> sizes;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!plan.reduced[d]) {
      sizes.push_back(x.sym_size(d));
    } else if (keepdim) {
      sizes.emplace_back(1);
    }
  }
  return sizes;
}

at::Tensor sum_as_rows(const at::Tensor& x, const SumPlan& plan, int64_t& rows, int64_t& cols) {
  const at::Tensor permuted = x.dim() == 0 ? x.reshape({1}) : x.permute(plan.permutation);
  rows = 1;
  for (int64_t i = 0; i < plan.kept_dims; ++i) rows *= permuted.size(i);
  cols = 1;
  for (int64_t i = plan.kept_dims; i < permuted.dim(); ++i) cols *= permuted.size(i);
  return permuted.contiguous().view({rows, cols});
}

at::Tensor sum_input(const at::Tensor& x, const SumPlan& plan) {
  return plan.cast_to.has_value() ? x.to(*plan.cast_to) : x;
}

at::Tensor sum_output(const at::Tensor& x, const SumPlan& plan, bool keepdim) {
  return at::empty_symint(sum_out_sizes(x, plan, keepdim), x.options().dtype(plan.out_dtype));
}

namespace {

void set_reduce_config(int64_t blocks, int64_t threads) {
  GPUPRIM_CHECK_ARG(blocks >= 0, "_set_reduce_config", "blocks", ">= 0", blocks);
  GPUPRIM_CHECK_ARG(threads == 0 || (threads >= 32 && threads <= 1024 && threads % 32 == 0), "_set_reduce_config",
                    "threads", "0 or a multiple of 32 in [32, 1024]", threads);
  config_blocks = blocks;
  config_threads = threads;
}

}  // namespace

// No tensor arguments: CompositeExplicitAutograd is the kernel the dispatcher uses for such ops.
TORCH_LIBRARY_IMPL(gpuprim, CompositeExplicitAutograd, m) { m.impl("_set_reduce_config", &set_reduce_config); }

}  // namespace gpuprim
