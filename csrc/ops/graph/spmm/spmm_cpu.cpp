// CPU kernels of gpuprim::spmm and its backward: the readable reference for the CUDA kernels, computing the
// same values bit for bit. The order (prim/device/merge_path/merge_path.h): each row's nonzeros are cut at
// the merge-path tile boundaries inside them; each piece is a left-to-right fold (fused multiply-adds for
// sums) from the identity, then the non-empty pieces fold left to right.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/torch_utils.h"
#include "ops/graph/spmm/spmm.h"
#include "prim/device/merge_path/merge_path.h"
#include "prim/device/merge_path/tuning_merge_path.h"

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

template <typename T, typename Acc>
void spmm_cpu_kernel(const std::vector<int64_t>& crow, const std::vector<int64_t>& col, const T* values,
                     const T* dense, const SpmmShape& shape, Reduce reduce, T* out) {
  const int64_t F = shape.features;
  const int64_t items = merge_path::tile_items(F);
  const int64_t tiles = merge_path::tile_count(shape.rows, shape.nnz, items);
  // The coordinates of the tile boundaries: boundary t cuts row cut_row[t] at nonzero cut_nz[t].
  std::vector<int64_t> cut_row(tiles + 1), cut_nz(tiles + 1);
  for (int64_t t = 0; t <= tiles; ++t) {
    const auto c = merge_path::search(std::min(t * items, shape.rows + shape.nnz), crow.data(), shape.rows, shape.nnz);
    cut_row[t] = c.row;
    cut_nz[t] = c.nz;
  }
  const bool mean = reduce == Reduce::kMean;
  at::parallel_for(0, shape.rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<Acc> total(F), piece(F);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t lo = crow[r], hi = crow[r + 1];
      bool any = false;
      int64_t t = std::lower_bound(cut_row.begin(), cut_row.end(), r) - cut_row.begin();
      int64_t start = lo;
      while (start < hi) {
        // The next cut strictly inside the row, else the row's end.
        while (t <= tiles && cut_row[t] == r && cut_nz[t] <= start) ++t;
        const int64_t stop = (t <= tiles && cut_row[t] == r && cut_nz[t] < hi) ? cut_nz[t] : hi;
        std::fill(piece.begin(), piece.end(), reducers::identity<Acc>(reduce));
        for (int64_t k = start; k < stop; ++k) {
          const Acc weight = values != nullptr ? static_cast<Acc>(values[k]) : Acc(1);
          const T* x = dense + col[k] * F;
          for (int64_t f = 0; f < F; ++f) {
            piece[f] = accumulate(reduce, piece[f], static_cast<Acc>(x[f]), weight, values != nullptr);
          }
        }
        for (int64_t f = 0; f < F; ++f) total[f] = any ? accumulate(reduce, total[f], piece[f], Acc(1), false) : piece[f];
        any = true;
        start = stop;
      }
      T* y = out + r * F;
      for (int64_t f = 0; f < F; ++f) {
        y[f] = static_cast<T>(any ? reducers::segment_value(mean, total[f], hi - lo) : Acc(0));
      }
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

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) {
  m.impl("spmm", &spmm_cpu);
  m.impl("spmm_backward", &spmm_backward_cpu);
}

}  // namespace gpuprim
