// CPU kernels of gpuprim::spmm and its backward: the readable reference for the CUDA kernels, computing the
// same values bit for bit in the order of prim/device/merge_path/row_order.h (a row's chunks, each a fixed
// reduction with fused multiply-adds for sums, folded left to right).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/graph/spmm/spmm.h"
#include "prim/device/merge_path/row_order.h"

namespace gpuprim {

namespace {

template <typename Acc>
Acc accumulate(Reduce reduce, Acc acc, Acc value, Acc weight, bool weighted) {
  if (reduce == Reduce::kSum || reduce == Reduce::kMean) return weighted ? std::fma(weight, value, acc) : acc + value;
  return reducers::combine(reduce, acc, weighted ? weight * value : value);
}

std::vector<int64_t> to_host(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.const_data_ptr<int64_t>(), c.const_data_ptr<int64_t>() + c.numel());
}

// One chunk [start, start + count) of a row (row_order.h) into value[0 .. F).
template <typename T, typename Acc>
void chunk_value(const std::vector<int64_t>& col, const T* values, const T* dense, int64_t F, Reduce reduce,
                 int64_t start, int64_t count, std::vector<Acc>& value) {
  const auto product = [&](Acc acc, int64_t k, int64_t f) {
    const Acc weight = values != nullptr ? static_cast<Acc>(values[k]) : Acc(1);
    return accumulate(reduce, acc, static_cast<Acc>(dense[col[k] * F + f]), weight, values != nullptr);
  };
  if (F == 1) {  // lane chunk: kLanes strided folds, then the shuffle-down tree
    constexpr int kLanes = merge_path::RowOrder::kLanes;
    Acc lane[kLanes];
    std::fill(lane, lane + kLanes, reducers::identity<Acc>(reduce));
    for (int64_t p = 0; p < count; ++p) lane[p % kLanes] = product(lane[p % kLanes], start + p, 0);
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      for (int v = 0; v < offset; ++v) lane[v] = accumulate(reduce, lane[v], lane[v + offset], Acc(1), false);
    }
    value[0] = lane[0];
    return;
  }
  std::fill(value.begin(), value.end(), reducers::identity<Acc>(reduce));  // column chunk: left-to-right folds
  for (int64_t k = start; k < start + count; ++k) {
    for (int64_t f = 0; f < F; ++f) value[f] = product(value[f], k, f);
  }
}

template <typename T, typename Acc>
void spmm_cpu_kernel(const std::vector<int64_t>& crow, const std::vector<int64_t>& col, const T* values,
                     const T* dense, const SpmmShape& shape, Reduce reduce, T* out) {
  const int64_t F = shape.features;
  const int64_t chunk = merge_path::chunk_size(F);
  const bool mean = reduce == Reduce::kMean;
  at::parallel_for(0, shape.rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<Acc> total(F), piece(F);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t lo = crow[r], hi = crow[r + 1];
      for (int64_t start = lo; start < hi; start += chunk) {
        chunk_value<T, Acc>(col, values, dense, F, reduce, start, std::min(chunk, hi - start), piece);
        for (int64_t f = 0; f < F; ++f) {
          total[f] = start == lo ? piece[f] : accumulate(reduce, total[f], piece[f], Acc(1), false);
        }
      }
      T* y = out + r * F;
      for (int64_t f = 0; f < F; ++f) y[f] = static_cast<T>(hi > lo ? reducers::segment_value(mean, total[f], hi - lo) : Acc(0));
    }
  });
}

template <typename T, typename Acc>
void values_grad_cpu(const T* grad, const std::vector<int64_t>& crow, const std::vector<int64_t>& col,
                     const T* dense, const SpmmShape& shape, bool mean, T* grad_values) {
  at::parallel_for(0, shape.rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* g = grad + r * shape.features;
      for (int64_t k = crow[r]; k < crow[r + 1]; ++k) {
        const T* x = dense + col[k] * shape.features;
        Acc acc = Acc(0);
        for (int64_t f = 0; f < shape.features; ++f) acc = std::fma(static_cast<Acc>(g[f]), static_cast<Acc>(x[f]), acc);
        if (mean) acc = acc / static_cast<Acc>(crow[r + 1] - crow[r]);
        grad_values[k] = static_cast<T>(acc);
      }
    }
  });
}

at::Tensor spmm_cpu(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                    const at::Tensor& dense, c10::string_view reduce) {
  const Reduce op = spmm_check(crow, col, values, dense, reduce);
  const at::Tensor x = dense.contiguous();
  at::Tensor out = at::empty_symint(spmm_out_sizes(crow, dense), x.options());
  const std::vector<int64_t> host_crow = to_host(crow);
  const SpmmShape shape = spmm_shape(crow, col, x);
  spmm_check_structure(host_crow, col, shape.cols, InputOp::kSpmm);
  if (out.numel() == 0) return out;
  const std::vector<int64_t> host_col = to_host(col);
  const at::Tensor v = values.has_value() ? values->contiguous() : at::Tensor();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gpuprim_spmm_cpu", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    spmm_cpu_kernel<scalar_t, Acc>(host_crow, host_col, v.defined() ? v.const_data_ptr<scalar_t>() : nullptr,
                                   x.const_data_ptr<scalar_t>(), shape, op, out.mutable_data_ptr<scalar_t>());
  });
  return out;
}

at::Tensor spmm_backward_cpu(const at::Tensor& grad, const at::Tensor& crow, const at::Tensor& col,
                             const at::Tensor& dense, c10::string_view reduce) {
  const Reduce op = spmm_backward_check(grad, crow, col, dense, reduce);
  const at::Tensor x = dense.contiguous(), g = grad.contiguous();
  at::Tensor grad_values = at::empty({col.size(0)}, x.options());
  const std::vector<int64_t> host_crow = to_host(crow);
  const SpmmShape shape = spmm_shape(crow, col, x);
  spmm_check_structure(host_crow, col, shape.cols, InputOp::kSpmmBackward);
  if (grad_values.numel() == 0) return grad_values;
  const std::vector<int64_t> host_col = to_host(col);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "gpuprim_spmm_backward_cpu", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    values_grad_cpu<scalar_t, Acc>(g.const_data_ptr<scalar_t>(), host_crow, host_col, x.const_data_ptr<scalar_t>(),
                                   shape, op == Reduce::kMean, grad_values.mutable_data_ptr<scalar_t>());
  });
  return grad_values;
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(CPU, spmm, cpu)

}  // namespace gpuprim
