// CPU kernel of gpuprim::sum and gpuprim::mean: the readable reference for the CUDA kernel. Both use
// prim/device/exact_sum/exact_sum.h, so their results are bitwise equal; the chunking below can be varied (test
// knob) to check that the result does not depend on it.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>

#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/reduce/sum/sum.h"
#include "prim/device/exact_sum/exact_sum.h"

namespace gpuprim {

namespace {

using namespace exact_sum;

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
  const Format format = format_of(to_dtype(out_type));
  auto finish_row = [&](int64_t row, const WideState<K>& state) {
    const double value = finish_value(state, mean, cols, format);
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

// Integer sums: int64 with two's-complement wrap (as torch), exact and so independent of order.
at::Tensor sum_integer_cpu(const at::Tensor& matrix, int64_t rows, int64_t cols) {
  at::Tensor sums = at::empty({rows}, matrix.options().dtype(at::kLong));
  int64_t* out = sums.mutable_data_ptr<int64_t>();
  AT_DISPATCH_INTEGRAL_TYPES_AND(at::kBool, matrix.scalar_type(), "gpuprim_sum_integer_cpu", [&] {
    const scalar_t* x = matrix.const_data_ptr<scalar_t>();
    const auto row_sum = [&](const scalar_t* row, int64_t begin, int64_t end) {
      uint64_t total = 0;  // unsigned: wrapping is defined
      for (int64_t i = begin; i < end; ++i) total += static_cast<uint64_t>(static_cast<int64_t>(row[i]));
      return total;
    };
    if (rows == 1) {
      const uint64_t total = at::parallel_reduce(
          0, cols, int64_t(1) << 16, uint64_t(0),
          [&](int64_t begin, int64_t end, uint64_t partial) { return partial + row_sum(x, begin, end); },
          [](uint64_t a, uint64_t b) { return a + b; });
      out[0] = static_cast<int64_t>(total);
      return;
    }
    at::parallel_for(0, rows, 1, [&](int64_t first, int64_t last) {
      for (int64_t row = first; row < last; ++row) out[row] = static_cast<int64_t>(row_sum(x + row * cols, 0, cols));
    });
  });
  return sums;
}

template <bool kMean>
at::Tensor sum_cpu(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  const SumPlan plan = sum_check(sum_op_name(kMean), x, dim, dtype);
  int64_t rows = 0, cols = 0;
  const at::Tensor matrix = sum_as_rows(sum_input(x, plan), plan, rows, cols);
  at::Tensor out = sum_output(x, plan, keepdim);
  if (rows == 0) return out;
  if (plan.integer) {
    out.copy_(sum_integer_cpu(matrix, rows, cols).view(out.sizes()));
    return out;
  }
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, matrix.scalar_type(), "gpuprim_sum_cpu", [&] {
    sum_rows_cpu<scalar_t>(matrix.const_data_ptr<scalar_t>(), rows, cols, kMean, plan.out_dtype,
                           out.mutable_data_ptr());
  });
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { impl(m, "sum", &sum_cpu<false>, "mean", &sum_cpu<true>); }

}  // namespace gpuprim
