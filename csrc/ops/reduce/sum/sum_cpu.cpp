// CPU kernel of gpuprim::sum and gpuprim::mean: the readable reference for the CUDA kernel. Both use
// prim/exact_sum.h, so their results are bitwise equal; the chunking below can be varied (test knob)
// to check that the result does not depend on it.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/torch_utils.h"
#include "ops/reduce/sum/sum.h"
#include "prim/device/exact_sum/exact_sum.h"

namespace gpuprim {

namespace {
std::atomic<int64_t> config_blocks{0}, config_threads{0};
}  // namespace

ReduceConfig reduce_config() { return ReduceConfig{config_blocks.load(), config_threads.load()}; }

SumPlan sum_check(const char* op, const at::Tensor& x, at::OptionalIntArrayRef dim,
                  std::optional<at::ScalarType> dtype) {
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(x.scalar_type()) && x.scalar_type() != at::kFloat8_e4m3fn &&
                          x.scalar_type() != at::kFloat8_e5m2,
                      op, "x", "a float16, bfloat16, float32 or float64 tensor", x.scalar_type());
  SumPlan plan;
  plan.out_dtype = dtype.value_or(x.scalar_type());
  GPUPRIM_CHECK_DTYPE(plan.out_dtype == at::kHalf || plan.out_dtype == at::kBFloat16 ||
                          plan.out_dtype == at::kFloat || plan.out_dtype == at::kDouble,
                      op, "dtype", "float16, bfloat16, float32 or float64", plan.out_dtype);
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

namespace {

using namespace exact_sum;

Format format_of(at::ScalarType type) {
  switch (type) {
    case at::kHalf: return float16_format();
    case at::kBFloat16: return bfloat16_format();
    case at::kFloat: return float32_format();
    default: return float64_format();
  }
}

template <typename In>
double to_double(In v) {
  if constexpr (std::is_same_v<In, double>) {
    return v;
  } else {
    return static_cast<double>(static_cast<float>(v));  // exact for fp16, bf16 and fp32
  }
}

// State of x[begin:end) split into `lanes` interleaved accumulators (as the GPU's lanes), merged.
template <int K, typename In>
State<K> sum_chunk(const In* x, int64_t begin, int64_t end, int64_t lanes) {
  State<K> total = empty_state<K>();
  for (int64_t lane = 0; lane < lanes; ++lane) {
    Accumulator<K> acc;
    acc.init();
    for (int64_t i = begin + lane; i < end; i += lanes) acc.add(to_double(x[i]));
    merge(total, acc.state());
  }
  return total;
}

// Chunks of at most 2^30 values keep the int64 counts of one chunk far from overflow.
constexpr int64_t kMaxChunk = int64_t(1) << 30;

template <typename In>
void sum_rows_cpu(const In* x, int64_t rows, int64_t cols, bool mean, at::ScalarType out_type, void* out) {
  constexpr int K = BinsFor<std::conditional_t<std::is_same_v<In, double>, double, float>>::value;
  const ReduceConfig config = reduce_config();
  const int64_t lanes = std::max<int64_t>(config.threads, 1);
  int64_t chunks = config.blocks > 0 ? config.blocks : (rows == 1 ? at::get_num_threads() * 4 : 1);
  chunks = std::clamp<int64_t>(chunks, (cols + kMaxChunk - 1) / kMaxChunk, std::max<int64_t>(cols, 1));
  const int64_t chunk_len = (cols + chunks - 1) / chunks;
  const Format format = format_of(out_type);
  auto finish_row = [&](int64_t row, const WideState<K>& state) {
    double value = finish(state, mean ? float64_format() : format);
    if (mean) value = round_double_to_format(value / static_cast<double>(cols), format);
    const bool nan = value != value;  // canonical NaN bits per format, as the CUDA kernel stores
    switch (out_type) {
      case at::kHalf:
        static_cast<at::Half*>(out)[row] =
            nan ? at::Half(kNaNBitsFloat16, at::Half::from_bits()) : at::Half(static_cast<float>(value));
        break;
      case at::kBFloat16:
        static_cast<at::BFloat16*>(out)[row] = nan ? at::BFloat16(kNaNBitsBFloat16, at::BFloat16::from_bits())
                                                   : at::BFloat16(static_cast<float>(value));
        break;
      case at::kFloat: {
        float v = static_cast<float>(value);  // exact: value is in the format
        if (nan) std::memcpy(&v, &kNaNBitsFloat32, sizeof(v));
        static_cast<float*>(out)[row] = v;
        break;
      }
      default: static_cast<double*>(out)[row] = nan ? canonical_nan() : value; break;
    }
  };
  if (rows == 1) {
    // One long row: chunks in parallel (any order: the merge is exact).
    std::vector<State<K>> partial(chunks, empty_state<K>());
    at::parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        partial[c] = sum_chunk<K>(x, std::min(c * chunk_len, cols), std::min((c + 1) * chunk_len, cols), lanes);
      }
    });
    WideState<K> total = widen(empty_state<K>());
    for (int64_t c = chunks - 1; c >= 0; --c) merge(total, widen(partial[c]));  // reversed on purpose
    finish_row(0, total);
    return;
  }
  at::parallel_for(0, rows, 1, [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row) {
      const In* row_x = x + row * cols;
      WideState<K> total = widen(empty_state<K>());
      for (int64_t c = 0; c < chunks; ++c) {
        merge(total, widen(sum_chunk<K>(row_x, std::min(c * chunk_len, cols), std::min((c + 1) * chunk_len, cols),
                                        lanes)));
      }
      finish_row(row, total);
    }
  });
}

at::Tensor sum_impl_cpu(const char* op, const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype, bool mean) {
  const SumPlan plan = sum_check(op, x, dim, dtype);
  int64_t rows = 0, cols = 0;
  const at::Tensor matrix = sum_as_rows(x, plan, rows, cols);
  at::Tensor out = at::empty_symint(sum_out_sizes(x, plan, keepdim), x.options().dtype(plan.out_dtype));
  if (rows == 0) return out;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, matrix.scalar_type(), "gpuprim_sum_cpu", [&] {
    sum_rows_cpu<scalar_t>(matrix.const_data_ptr<scalar_t>(), rows, cols, mean, plan.out_dtype,
                           out.mutable_data_ptr());
  });
  return out;
}

at::Tensor sum_cpu(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  return sum_impl_cpu("sum", x, dim, keepdim, dtype, false);
}

at::Tensor mean_cpu(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return sum_impl_cpu("mean", x, dim, keepdim, dtype, true);
}

void set_reduce_config(int64_t blocks, int64_t threads) {
  GPUPRIM_CHECK_ARG(blocks >= 0, "_set_reduce_config", "blocks", ">= 0", blocks);
  GPUPRIM_CHECK_ARG(threads == 0 || (threads >= 32 && threads <= 1024 && threads % 32 == 0), "_set_reduce_config",
                    "threads", "0 or a multiple of 32 in [32, 1024]", threads);
  config_blocks = blocks;
  config_threads = threads;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) {
  m.impl("sum", &sum_cpu);
  m.impl("mean", &mean_cpu);
}

// No tensor arguments: CompositeExplicitAutograd is the kernel the dispatcher uses for such ops.
TORCH_LIBRARY_IMPL(gpuprim, CompositeExplicitAutograd, m) { m.impl("_set_reduce_config", &set_reduce_config); }

}  // namespace gpuprim
