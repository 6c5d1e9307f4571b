// CPU kernels of gpuprim::index_add (and the engine shared with gpuprim::scatter_reduce): the readable
// reference for the CUDA kernels. Each destination row accumulates its source rows in item order in Acc
// (fp32 for fp16/bf16/fp32, fp64, int64 for integers), then is finalized once, as the CUDA kernels do.
#include <torch/library.h>

#include <string>
#include <vector>

#include "common/torch_utils.h"
#include "ops/index_reduce/index_add/index_add.h"

namespace gpuprim {

bool index_reduce_dtype_ok(at::ScalarType type) {
  switch (type) {
    case at::kByte: case at::kChar: case at::kShort: case at::kInt: case at::kLong:
    case at::kHalf: case at::kBFloat16: case at::kFloat: case at::kDouble: return true;
    default: return false;
  }
}

int64_t index_add_check(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                        const c10::Scalar& alpha) {
  const char* op = "index_add";
  GPUPRIM_CHECK_DTYPE(index_reduce_dtype_ok(input.scalar_type()), op, "input",
                      "a uint8, int8, int16, int32, int64, float16, bfloat16, float32 or float64 tensor",
                      input.scalar_type());
  GPUPRIM_CHECK_DTYPE(source.scalar_type() == input.scalar_type(), op, "source",
                      c10::str("of input's dtype ", input.scalar_type()), source.scalar_type());
  GPUPRIM_CHECK_DTYPE(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op, "index",
                      "an int32 or int64 tensor", index.scalar_type());
  check_same_device(op, input, "index", index);
  check_same_device(op, input, "source", source);
  GPUPRIM_CHECK_ARG(index.dim() <= 1, op, "index", "a 0-d or 1-D tensor", std::to_string(index.dim()) + "-D tensor");
  const int64_t d = wrap_dim(op, "dim", dim, input.dim());
  GPUPRIM_CHECK_ARG(source.dim() == input.dim() || (source.dim() == 0 && input.dim() <= 1) ||
                        (input.dim() == 0 && source.dim() == 1),
                    op, "source", c10::str("of input's number of dims (", input.dim(), ")"),
                    std::to_string(source.dim()) + "-D tensor");
  if (input.dim() >= 1 && source.dim() == input.dim()) {
    for (int64_t k = 0; k < input.dim(); ++k) {
      if (k == d) continue;
      GPUPRIM_CHECK_ARG(source.sym_size(k) == input.sym_size(k), op, "source",
                        c10::str("of input's size except along dim (input ", input.sym_sizes(), ")"),
                        source.sym_sizes());
    }
  }
  const c10::SymInt source_rows = source.dim() == 0 ? c10::SymInt(1) : source.sym_size(input.dim() == 0 ? 0 : d);
  GPUPRIM_CHECK_ARG(index.sym_numel() == source_rows, op, "index",
                    c10::str("of source's length along dim (", source_rows, ")"), index.sym_numel());
  if (at::isIntegralType(input.scalar_type(), /*includeBool=*/false)) {
    GPUPRIM_CHECK_ARG(!alpha.isFloatingPoint() && !alpha.isComplex(), op, "alpha",
                      "an integer for integer tensors", alpha.toDouble());
  }
  return d;
}

IndexReduceShape index_add_shape(const at::Tensor& input, int64_t dim, const at::Tensor& index) {
  if (input.dim() == 0) return {1, index.numel(), 1, 1};
  const int64_t outer = c10::multiply_integers(input.sizes().slice(0, dim));
  const int64_t inner = c10::multiply_integers(input.sizes().slice(dim + 1));
  return {outer, index.numel(), input.size(dim), inner};
}

void check_index_range(const char* op, const at::Tensor& index, int64_t rows) {
  if (index.numel() == 0) return;
  const auto [low_t, high_t] = at::aminmax(index);
  const int64_t low = low_t.item<int64_t>(), high = high_t.item<int64_t>();
  GPUPRIM_CHECK_INDEX(low >= 0 && high < rows, op, "index", c10::str("in [0, ", rows, ")"), low < 0 ? low : high);
}

namespace {

template <typename T, typename Acc, typename Index>
void reduce_loop(const Index* index, const T* src, const IndexReduceShape& s, IndexReduce reduce, bool include_self,
                 Acc scale, T* out) {
  using namespace index_reduce;
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
                             IndexReduce reduce, bool include_self, const c10::Scalar& alpha, at::Tensor& out) {
  if (shape.outer == 0 || shape.items == 0 || shape.rows == 0 || shape.inner == 0) return;
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

at::Tensor index_add_cpu(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                         const c10::Scalar& alpha, std::optional<bool> /*deterministic: the CPU sums in order*/) {
  const int64_t d = index_add_check(input, dim, index, source, alpha);
  at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
  const IndexReduceShape shape = index_add_shape(input, d, index);
  check_index_range("index_add", index, shape.rows);
  index_reduce_cpu_kernel(index, source.contiguous(), shape, IndexReduce::kSum, /*include_self=*/true, alpha, out);
  return out;
}

void index_add_cpu_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                    const c10::Scalar& alpha, std::optional<bool> deterministic) {
  const_cast<at::Tensor&>(input).copy_(index_add_cpu(input, dim, index, source, alpha, deterministic));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) {
  m.impl("index_add", &index_add_cpu);
  m.impl("index_add_", &index_add_cpu_);
}

}  // namespace gpuprim
