// Device-independent parts of gpuprim::scatter_reduce: argument checks and the destinations of its items.
#include <string>

#include "common/choice.h"
#include "common/torch_utils.h"
#include "ops/index_reduce/scatter_reduce/scatter_reduce.h"

namespace gpuprim {

namespace {

Reduce parse_reduce(c10::string_view reduce, const char* op) {
  return parse_choice<Reduce>(op, "reduce", reduce,
                              {{"sum", Reduce::kSum}, {"prod", Reduce::kProd}, {"mean", Reduce::kMean},
                               {"amax", Reduce::kMax}, {"amin", Reduce::kMin}});
}

}  // namespace

ScatterReduceArgs scatter_reduce_check(const at::Tensor& input, int64_t dim, const at::Tensor& index,
                                       const at::Tensor& src, c10::string_view reduce, const char* op) {
  const Reduce r = parse_reduce(reduce, op);
  GPUPRIM_CHECK_DTYPE(index_reduce_dtype_ok(input.scalar_type()), op, "input",
                      "a bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32 or float64 tensor",
                      input.scalar_type());
  GPUPRIM_CHECK_DTYPE(input.scalar_type() != at::kBool || r != Reduce::kMean, op, "input",
                      "not bool for reduce='mean' (as in torch)", input.scalar_type());
  check_index_reduce_operands(op, input, index, src, "src");
  const int64_t d = wrap_dim(op, "dim", dim, input.dim());
  GPUPRIM_CHECK_ARG(index.dim() == input.dim(), op, "index", c10::str("of input's number of dims (", input.dim(), ")"),
                    std::to_string(index.dim()) + "-D tensor");
  GPUPRIM_CHECK_ARG(src.dim() == input.dim(), op, "src", c10::str("of input's number of dims (", input.dim(), ")"),
                    std::to_string(src.dim()) + "-D tensor");
  for (int64_t k = 0; k < input.dim(); ++k) {
    GPUPRIM_CHECK_ARG(index.sym_size(k) <= src.sym_size(k), op, "index",
                      c10::str("no larger than src in every dim (src ", src.sym_sizes(), ")"), index.sym_sizes());
    if (k != d) {
      GPUPRIM_CHECK_ARG(index.sym_size(k) <= input.sym_size(k), op, "index",
                        c10::str("no larger than input in every dim but dim (input ", input.sym_sizes(), ")"),
                        index.sym_sizes());
    }
  }
  return {d, r};
}

at::Tensor scatter_destinations(const at::Tensor& input, int64_t dim, const at::Tensor& index) {
  const at::Tensor idx = index.to(at::kLong);
  if (input.dim() == 0) {
    return at::where((idx >= 0) & (idx < 1), idx, -1).reshape({-1}).contiguous();
  }
  const auto strides = c10::contiguous_strides(input.sizes());
  at::Tensor key = idx * strides[dim];
  for (int64_t k = 0; k < input.dim(); ++k) {
    if (k == dim || index.size(k) == 1) continue;
    std::vector<int64_t> shape(input.dim(), 1);
    shape[k] = index.size(k);
    key = key + at::arange(index.size(k), idx.options()).mul_(strides[k]).view(shape);
  }
  return at::where((idx >= 0) & (idx < input.size(dim)), key, -1).reshape({-1}).contiguous();
}

at::Tensor scatter_source(const at::Tensor& src, const at::Tensor& index) {
  at::Tensor s = src;
  for (int64_t k = 0; k < src.dim(); ++k) {
    if (index.size(k) != src.size(k)) s = s.narrow(k, 0, index.size(k));
  }
  return s.contiguous();
}

}  // namespace gpuprim
