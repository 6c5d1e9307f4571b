// CPU kernels of gpuprim::embedding_bag and its backward: the readable reference for the CUDA
// kernels (same skipping rules, same sort-by-row gradient, fp32 accumulation for 16-bit weights).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/embedding/embedding_bag/embedding_bag.h"

namespace gpuprim {

namespace {

template <typename T> struct CpuAcc { using type = float; };
template <> struct CpuAcc<double> { using type = double; };

inline bool used(int64_t index, const EmbeddingBagShape& s) {
  return index >= 0 && index < s.num_weights && index != s.padding_idx;
}

template <typename T, typename I>
void forward_cpu(const T* weight, const I* indices, const int64_t* bounds, const T* psw, const EmbeddingBagShape& s,
                 EmbeddingBagMode mode, T* out, int64_t* bag_size, int64_t* max_indices) {
  using Acc = typename CpuAcc<T>::type;
  at::parallel_for(0, s.bags, 1, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(s.dim);
    for (int64_t b = begin; b < end; ++b) {
      int64_t lo, hi;
      segment_bounds(bounds, b, s.nnz, lo, hi);
      std::fill(acc.begin(), acc.end(), Acc(0));
      int64_t* argmax = mode == EmbeddingBagMode::kMax ? max_indices + b * s.dim : nullptr;
      if (argmax) std::fill(argmax, argmax + s.dim, int64_t(-1));
      int64_t count = 0;
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t r = static_cast<int64_t>(indices[p]);
        if (!used(r, s)) continue;
        ++count;
        const T* row = weight + r * s.dim;
        if (argmax) {
          for (int64_t c = 0; c < s.dim; ++c) {
            const Acc v = static_cast<Acc>(row[c]);
            if (argmax[c] < 0 || v > acc[c]) {  // the first maximum wins (as torch)
              acc[c] = v;
              argmax[c] = r;
            }
          }
        } else {
          const Acc scale = psw ? static_cast<Acc>(psw[p]) : Acc(1);
          for (int64_t c = 0; c < s.dim; ++c) acc[c] += scale * static_cast<Acc>(row[c]);
        }
      }
      bag_size[b] = count;
      T* o = out + b * s.dim;
      for (int64_t c = 0; c < s.dim; ++c) {
        const Acc v = mode == EmbeddingBagMode::kMean && count > 0 ? acc[c] / static_cast<Acc>(count) : acc[c];
        o[c] = static_cast<T>(v);
      }
    }
  });
}

// Gradient of the weight rows (sum/mean): the used positions sorted stably by row, each row's gradient summed
// in that order (ascending position) in Acc, as the CUDA kernels do. Dense: grad_weight [num_weights, dim];
// sparse: rows[k], grad_weight[k] for the k-th distinct row.
template <typename T, typename I>
int64_t weight_grad_sum_cpu(const T* grad, const I* indices, const int64_t* bounds, const int64_t* bag_size,
                            const T* psw, const EmbeddingBagShape& s, bool mean, bool sparse, bool by_freq,
                            T* grad_weight, int64_t* rows) {
  using Acc = typename CpuAcc<T>::type;
  std::vector<int64_t> order;  // used positions inside a bag
  std::vector<int64_t> bag_of(s.nnz, -1);
  for (int64_t p = 0; p < s.nnz; ++p) {
    bag_of[p] = segment_of_row(bounds, s.bags, s.nnz, p);
    if (bag_of[p] >= 0 && used(static_cast<int64_t>(indices[p]), s)) order.push_back(p);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return static_cast<int64_t>(indices[a]) < static_cast<int64_t>(indices[b]); });
  std::vector<Acc> acc(s.dim);
  int64_t runs = 0;
  for (size_t start = 0; start < order.size();) {
    const int64_t row = static_cast<int64_t>(indices[order[start]]);
    size_t stop = start;
    std::fill(acc.begin(), acc.end(), Acc(0));
    for (; stop < order.size() && static_cast<int64_t>(indices[order[stop]]) == row; ++stop) {
      const int64_t p = order[stop], b = bag_of[p];
      const T* g = grad + b * s.dim;
      if (mean) {
        // Times the reciprocal (as the CUDA kernels: one division per position, not per element).
        const Acc inv = Acc(1) / static_cast<Acc>(std::max<int64_t>(bag_size[b], 1));
        for (int64_t c = 0; c < s.dim; ++c) acc[c] += static_cast<Acc>(g[c]) * inv;
      } else {
        const Acc scale = psw ? static_cast<Acc>(psw[p]) : Acc(1);
        for (int64_t c = 0; c < s.dim; ++c) acc[c] += static_cast<Acc>(g[c]) * scale;
      }
    }
    // scale_grad_by_freq: the row's sum times 1 / its count (the run's length), as the CUDA kernels.
    const Acc freq = by_freq ? Acc(1) / static_cast<Acc>(stop - start) : Acc(1);
    T* dst = grad_weight + (sparse ? runs : row) * s.dim;
    for (int64_t c = 0; c < s.dim; ++c) dst[c] = static_cast<T>(by_freq ? acc[c] * freq : acc[c]);
    if (sparse) rows[runs] = row;
    ++runs;
    start = stop;
  }
  return runs;
}

// max: each (bag, column) sends its gradient to weight[max_indices[bag, column], column]; the contributions to
// one element are summed in ascending bag order.
template <typename T>
void weight_grad_max_cpu(const T* grad, const int64_t* max_indices, const EmbeddingBagShape& s, T* grad_weight) {
  using Acc = typename CpuAcc<T>::type;
  std::vector<Acc> acc(s.num_weights * s.dim, Acc(0));
  std::vector<bool> touched(s.num_weights * s.dim, false);
  for (int64_t b = 0; b < s.bags; ++b) {
    for (int64_t c = 0; c < s.dim; ++c) {
      const int64_t r = max_indices[b * s.dim + c];
      if (r < 0 || r >= s.num_weights) continue;
      acc[r * s.dim + c] += static_cast<Acc>(grad[b * s.dim + c]);
      touched[r * s.dim + c] = true;
    }
  }
  for (int64_t i = 0; i < s.num_weights * s.dim; ++i) {
    if (touched[i]) grad_weight[i] = static_cast<T>(acc[i]);
  }
}

// d out[bag(p)] / d psw[p] = weight[indices[p]]: the dot product with the bag's gradient (0 for skipped p).
template <typename T, typename I>
void psw_grad_cpu(const T* grad, const T* weight, const I* indices, const int64_t* bounds, const EmbeddingBagShape& s,
                  T* grad_psw) {
  using Acc = typename CpuAcc<T>::type;
  at::parallel_for(0, s.nnz, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t r = static_cast<int64_t>(indices[p]);
      const int64_t b = segment_of_row(bounds, s.bags, s.nnz, p);
      Acc dot = Acc(0);
      if (b >= 0 && used(r, s)) {
        for (int64_t c = 0; c < s.dim; ++c) {
          dot += static_cast<Acc>(grad[b * s.dim + c]) * static_cast<Acc>(weight[r * s.dim + c]);
        }
      }
      grad_psw[p] = static_cast<T>(dot);
    }
  });
}

std::vector<int64_t> to_host(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.const_data_ptr<int64_t>(), c.const_data_ptr<int64_t>() + c.numel());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> embedding_bag_cpu(
    const at::Tensor& weight, const at::Tensor& indices, const std::optional<at::Tensor>& offsets,
    c10::string_view mode, const std::optional<at::Tensor>& per_sample_weights, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  const EmbeddingBagArgs args = embedding_bag_check(weight, indices, offsets, mode, per_sample_weights, padding_idx,
                                                    include_last_offset, sparse, scale_grad_by_freq);
  const at::Tensor w = weight.contiguous(), idx = indices.contiguous().view(-1);
  const bool max = args.mode == EmbeddingBagMode::kMax;
  at::Tensor out, bag_size, max_indices;
  std::tie(out, bag_size, max_indices) =
      embedding_bag_outputs(weight, indices, offsets, include_last_offset, args.mode);
  const int64_t bags = out.size(0);
  if (bags == 0) return {out, bag_size, max_indices};
  const std::vector<int64_t> bounds = to_host(embedding_bag_bounds(indices, offsets, include_last_offset));
  embedding_bag_check_data(indices, bounds, w.size(0), offsets.has_value(), include_last_offset,
                           InputOp::kEmbeddingBag);
  const EmbeddingBagShape shape = embedding_bag_shape(w, idx, bags, args.padding_idx);
  const at::Tensor psw = per_sample_weights.has_value() ? per_sample_weights->contiguous().view(-1) : at::Tensor();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, w.scalar_type(), "gpuprim_embedding_bag_cpu", [&] {
    AT_DISPATCH_INDEX_TYPES(idx.scalar_type(), "gpuprim_embedding_bag_cpu_index", [&] {
      forward_cpu<scalar_t, index_t>(w.const_data_ptr<scalar_t>(), idx.const_data_ptr<index_t>(), bounds.data(),
                                     psw.defined() ? psw.const_data_ptr<scalar_t>() : nullptr, shape, args.mode,
                                     out.mutable_data_ptr<scalar_t>(), bag_size.mutable_data_ptr<int64_t>(),
                                     max ? max_indices.mutable_data_ptr<int64_t>() : nullptr);
    });
  });
  return {out, bag_size, max_indices};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_backward_cpu(
    const at::Tensor& grad, const at::Tensor& weight, const at::Tensor& indices,
    const std::optional<at::Tensor>& offsets, const at::Tensor& bag_size, const at::Tensor& max_indices,
    const std::optional<at::Tensor>& per_sample_weights, c10::string_view mode, std::optional<int64_t> padding_idx,
    bool include_last_offset, bool sparse, bool scale_grad_by_freq) {
  const EmbeddingBagArgs args = embedding_bag_backward_check(grad, weight, indices, offsets, bag_size, max_indices,
                                                             per_sample_weights, mode, padding_idx,
                                                             include_last_offset, sparse, scale_grad_by_freq);
  const int64_t bags = grad.size(0), dim = weight.size(1), nnz = indices.numel();
  const at::Tensor w = weight.contiguous(), idx = indices.contiguous().view(-1), g = grad.contiguous();
  at::Tensor grad_weight = at::zeros({sparse ? nnz : weight.size(0), dim}, w.options());
  at::Tensor rows = at::zeros({sparse ? nnz : 0}, idx.options().dtype(at::kLong));
  at::Tensor num_rows = at::zeros({1}, idx.options().dtype(at::kLong));
  const bool with_psw = per_sample_weights.has_value();
  at::Tensor grad_psw = with_psw ? at::zeros(per_sample_weights->sizes(), w.options()) : at::zeros({0}, w.options());
  if (bags == 0 || dim == 0 || nnz == 0) return {grad_weight, rows, num_rows, grad_psw};
  const std::vector<int64_t> bounds = to_host(embedding_bag_bounds(indices, offsets, include_last_offset));
  embedding_bag_check_data(indices, bounds, w.size(0), offsets.has_value(), include_last_offset,
                           InputOp::kEmbeddingBagBackward);
  const EmbeddingBagShape shape = embedding_bag_shape(w, idx, bags, args.padding_idx);
  const at::Tensor psw = with_psw ? per_sample_weights->contiguous().view(-1) : at::Tensor();
  const at::Tensor sizes = bag_size.contiguous(), argmax = max_indices.contiguous();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, w.scalar_type(), "gpuprim_embedding_bag_bw_cpu", [&] {
    AT_DISPATCH_INDEX_TYPES(idx.scalar_type(), "gpuprim_embedding_bag_bw_cpu_index", [&] {
      const scalar_t* gp = g.const_data_ptr<scalar_t>();
      if (args.mode == EmbeddingBagMode::kMax) {
        weight_grad_max_cpu<scalar_t>(gp, argmax.const_data_ptr<int64_t>(), shape,
                                      grad_weight.mutable_data_ptr<scalar_t>());
      } else {
        num_rows.fill_(weight_grad_sum_cpu<scalar_t, index_t>(
            gp, idx.const_data_ptr<index_t>(), bounds.data(), sizes.const_data_ptr<int64_t>(),
            with_psw ? psw.const_data_ptr<scalar_t>() : nullptr, shape, args.mode == EmbeddingBagMode::kMean, sparse,
            scale_grad_by_freq, grad_weight.mutable_data_ptr<scalar_t>(), sparse ? rows.mutable_data_ptr<int64_t>() : nullptr));
      }
      if (with_psw) {
        psw_grad_cpu<scalar_t, index_t>(gp, w.const_data_ptr<scalar_t>(), idx.const_data_ptr<index_t>(),
                                        bounds.data(), shape, grad_psw.mutable_data_ptr<scalar_t>());
      }
    });
  });
  return {grad_weight, rows, num_rows, grad_psw};
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(CPU, embedding_bag, cpu)

}  // namespace gpuprim
