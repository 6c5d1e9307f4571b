// CPU kernels of gpuprim::segment_reduce and its backward: the readable reference for the CUDA kernels.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cmath>
#include <vector>

#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/reduce/segment_reduce/segment_reduce.h"

namespace gpuprim {

namespace {

template <typename T, typename Acc>
void reduce_cpu(const T* src, const int64_t* offsets, T* out, SegmentShape shape, Reduce reduce) {
  at::parallel_for(0, shape.outer * shape.segments, 1, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(shape.inner);
    for (int64_t os = begin; os < end; ++os) {
      const int64_t o = os / shape.segments, s = os % shape.segments;
      int64_t lo, hi;
      segment_bounds(offsets, s, shape.rows, lo, hi);
      std::fill(acc.begin(), acc.end(), reducers::identity<Acc>(reduce));
      for (int64_t r = lo; r < hi; ++r) {
        const T* row = src + (o * shape.rows + r) * shape.inner;
        for (int64_t c = 0; c < shape.inner; ++c) acc[c] = reducers::combine(reduce, acc[c], static_cast<Acc>(row[c]));
      }
      T* out_row = out + os * shape.inner;
      for (int64_t c = 0; c < shape.inner; ++c) {
        out_row[c] = static_cast<T>(reducers::segment_value(reduce == Reduce::kMean, acc[c], hi - lo));
      }
    }
  });
}

template <typename T, typename Acc>
void backward_cpu(const T* grad, const T* src, const T* out, const int64_t* offsets, SegmentShape shape,
                  Reduce reduce, T* grad_src) {
  if (reduce == Reduce::kSum || reduce == Reduce::kMean) {
    // Each row takes its segment's gradient (divided by the count for mean); rows in no segment get 0.
    at::parallel_for(0, shape.outer * shape.rows, 1, [&](int64_t begin, int64_t end) {
      for (int64_t orow = begin; orow < end; ++orow) {
        const int64_t o = orow / shape.rows, r = orow % shape.rows;
        const int64_t s = segment_of_row(offsets, shape.segments, shape.rows, r);
        T* g = grad_src + orow * shape.inner;
        if (s < 0) {
          std::fill(g, g + shape.inner, T(0));
          continue;
        }
        int64_t lo, hi;
        segment_bounds(offsets, s, shape.rows, lo, hi);
        const T* from = grad + (o * shape.segments + s) * shape.inner;
        for (int64_t c = 0; c < shape.inner; ++c) {
          const Acc value = static_cast<Acc>(from[c]);
          g[c] = static_cast<T>(reduce == Reduce::kMean ? value / static_cast<Acc>(hi - lo) : value);
        }
      }
    });
    return;
  }
  // max/min: the whole gradient goes to the first row (lowest index) equal to the result (NaN matches NaN).
  at::parallel_for(0, shape.outer, 1, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      for (int64_t s = 0; s < shape.segments; ++s) {
        int64_t lo, hi;
        segment_bounds(offsets, s, shape.rows, lo, hi);
        for (int64_t c = 0; c < shape.inner; ++c) {
          const int64_t at_out = (o * shape.segments + s) * shape.inner + c;
          const Acc target = static_cast<Acc>(out[at_out]);
          for (int64_t r = lo; r < hi; ++r) {
            const Acc v = static_cast<Acc>(src[(o * shape.rows + r) * shape.inner + c]);
            if (v == target || (v != v && target != target)) {
              grad_src[(o * shape.rows + r) * shape.inner + c] = grad[at_out];
              break;
            }
          }
        }
      }
    }
  });
}

std::vector<int64_t> offsets_on_host(const at::Tensor& offsets) {
  const at::Tensor o = offsets.to(at::kLong).contiguous();
  return std::vector<int64_t>(o.const_data_ptr<int64_t>(), o.const_data_ptr<int64_t>() + o.numel());
}

at::Tensor segment_reduce_cpu(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce,
                              int64_t dim) {
  const SegmentReduceArgs args = segment_reduce_check(src, offsets, reduce, dim);
  const at::Tensor input = src.contiguous();
  at::Tensor out = at::empty_symint(segment_reduce_out_sizes(src, offsets, args.dim), input.options());
  if (out.numel() == 0) return out;
  const std::vector<int64_t> host_offsets = offsets_on_host(offsets);
  const SegmentShape shape = segment_shape(input, offsets, args.dim);
  segment_reduce_check_offsets(host_offsets, shape.rows, InputOp::kSegmentReduce);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_segment_reduce_cpu", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    reduce_cpu<scalar_t, Acc>(input.const_data_ptr<scalar_t>(), host_offsets.data(),
                              out.mutable_data_ptr<scalar_t>(), shape, args.reduce);
  });
  return out;
}

at::Tensor segment_reduce_backward_cpu(const at::Tensor& grad, const at::Tensor& src, const at::Tensor& offsets,
                                       const at::Tensor& out, c10::string_view reduce, int64_t dim) {
  const SegmentReduceArgs args = segment_reduce_backward_check(grad, src, offsets, out, reduce, dim);
  const at::Tensor input = src.contiguous();
  at::Tensor grad_src = at::zeros(input.sizes(), input.options());
  if (grad_src.numel() == 0) return grad_src;
  const std::vector<int64_t> host_offsets = offsets_on_host(offsets);
  segment_reduce_check_offsets(host_offsets, src.size(args.dim), InputOp::kSegmentReduceBackward);
  const SegmentShape shape = segment_shape(input, offsets, args.dim);
  const at::Tensor grad_c = grad.contiguous(), out_c = out.contiguous();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_segment_reduce_bw_cpu", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    backward_cpu<scalar_t, Acc>(grad_c.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>(),
                                out_c.const_data_ptr<scalar_t>(), host_offsets.data(), shape, args.reduce,
                                grad_src.mutable_data_ptr<scalar_t>());
  });
  return grad_src;
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(CPU, segment_reduce, cpu)

}  // namespace gpuprim
