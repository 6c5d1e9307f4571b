// CPU kernels of gpuprim::index_add (and the engine shared with gpuprim::scatter_reduce): the readable
// reference for the CUDA kernels. Each destination row accumulates its source rows in item order in Acc
// (fp32 for fp16/bf16/fp32, fp64, int64 for integers), then is finalized once, as the CUDA kernels do.
#include <torch/library.h>

#include <string>
#include <vector>

#include "common/registration.h"
#include "common/torch_utils.h"
#include "ops/index_reduce/index_add/index_add.h"

namespace gpuprim {

namespace {

template <typename T, typename Acc, typename Index>
void reduce_loop(const Index* index, const T* src, const IndexReduceShape& s, Reduce reduce, bool include_self,
                 Acc scale, T* out) {
  using namespace reducers;
  std::vector<Acc> acc(s.rows * s.inner);
  std::vector<int64_t> count(s.rows);
  for (int64_t o = 0; o < s.outer; ++o) {
    std::fill(acc.begin(), acc.end(), identity<Acc>(reduce));
    std::fill(count.begin(), count.end(), 0);
    for (int64_t i = 0; i < s.items; ++i) {
      const int64_t r = static_cast<int64_t>(index[i]);
      ++count[r];
      const T* row = src + (o * s.items + i) * s.inner;
      Acc* a = acc.data() + r * s.inner;
      for (int64_t c = 0; c < s.inner; ++c) a[c] = combine(reduce, a[c], static_cast<Acc>(row[c]));
    }
    for (int64_t r = 0; r < s.rows; ++r) {
      if (count[r] == 0) continue;
      T* dst = out + (o * s.rows + r) * s.inner;
      const Acc* a = acc.data() + r * s.inner;
      for (int64_t c = 0; c < s.inner; ++c) {
        dst[c] = static_cast<T>(finalize<T>(reduce, include_self, static_cast<Acc>(dst[c]), a[c], count[r], scale));
      }
    }
  }
}

}  // namespace

void index_reduce_cpu_kernel(const at::Tensor& index, const at::Tensor& src, const IndexReduceShape& shape,
                             Reduce reduce, bool include_self, const c10::Scalar& alpha, at::Tensor& out) {
  if (shape.outer == 0 || shape.items == 0 || shape.rows == 0 || shape.inner == 0) return;
  if (src.scalar_type() == at::kBool) {
    at::Tensor bytes = out.view(at::kByte);
    index_reduce_cpu_kernel(index, src.view(at::kByte), shape, bool_reduce(reduce), include_self, 1, bytes);
    return;
  }
  const at::Tensor idx = index.contiguous();
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, src.scalar_type(), "gpuprim_index_reduce_cpu", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double,
                                   std::conditional_t<std::is_floating_point_v<scalar_t> ||
                                                          std::is_same_v<scalar_t, at::Half> ||
                                                          std::is_same_v<scalar_t, at::BFloat16>,
                                                      float, int64_t>>;
    const Acc scale = alpha.to<Acc>();
    AT_DISPATCH_INDEX_TYPES(idx.scalar_type(), "gpuprim_index_reduce_cpu_index", [&] {
      reduce_loop<scalar_t, Acc, index_t>(idx.const_data_ptr<index_t>(), src.const_data_ptr<scalar_t>(), shape,
                                          reduce, include_self, scale, out.mutable_data_ptr<scalar_t>());
    });
  });
}

namespace {

at::Tensor index_add_cpu_impl(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                              const c10::Scalar& alpha, InputOp op) {
  const int64_t d = index_add_check(input, dim, index, source, alpha);
  at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
  const IndexReduceShape shape = index_add_shape(input, d, index);
  check_index_range(op, index, shape.rows, d);
  if (input.scalar_type() == at::kBool && !alpha_is_true(alpha)) return out;  // adds `false`s: nothing changes
  index_reduce_cpu_kernel(index, source.contiguous(), shape, Reduce::kSum, /*include_self=*/true, alpha, out);
  return out;
}

at::Tensor index_add_cpu(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                         const c10::Scalar& alpha, std::optional<bool> /*deterministic: the CPU sums in order*/) {
  return index_add_cpu_impl(input, dim, index, source, alpha, InputOp::kIndexAdd);
}

void index_add_cpu_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                    const c10::Scalar& alpha, std::optional<bool> /*deterministic*/) {
  const_cast<at::Tensor&>(input).copy_(index_add_cpu_impl(input, dim, index, source, alpha, InputOp::kIndexAddInPlace));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { impl(m, "index_add", &index_add_cpu, "index_add_", &index_add_cpu_); }

}  // namespace gpuprim
