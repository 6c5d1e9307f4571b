// Device-independent parts of gpuprim::segment_reduce: argument checks and shape rules (CPU, CUDA, Meta).
#include <string>
#include <vector>

#include "common/choice.h"
#include "common/input_errors.h"
#include "common/torch_utils.h"
#include "ops/reduce/segment_reduce/segment_reduce.h"

namespace gpuprim {

namespace {

Reduce parse_reduce(c10::string_view reduce) {
  return parse_choice<Reduce>("segment_reduce", "reduce", reduce,
                              {{"sum", Reduce::kSum}, {"mean", Reduce::kMean}, {"max", Reduce::kMax},
                               {"min", Reduce::kMin}, {"prod", Reduce::kProd}});
}

}  // namespace

SegmentReduceArgs segment_reduce_check(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce,
                                       int64_t dim) {
  const Reduce op = parse_reduce(reduce);
  const auto type = src.scalar_type();
  GPUPRIM_CHECK_DTYPE(type == at::kHalf || type == at::kBFloat16 || type == at::kFloat || type == at::kDouble,
                      "segment_reduce", "src", "a float16, bfloat16, float32 or float64 tensor", type);
  GPUPRIM_CHECK_ARG(src.dim() >= 1, "segment_reduce", "src", "at least 1-D", "a 0-d tensor");
  check_same_device("segment_reduce", src, "offsets", offsets);
  GPUPRIM_CHECK_ARG(offsets.dim() == 1, "segment_reduce", "offsets", "1-D",
                    std::to_string(offsets.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(offsets.scalar_type() == at::kInt || offsets.scalar_type() == at::kLong, "segment_reduce",
                      "offsets", "an int32 or int64 tensor", offsets.scalar_type());
  GPUPRIM_CHECK_ARG(offsets.sym_size(0) >= 1, "segment_reduce", "offsets",
                    "of length num_segments + 1 >= 1", offsets.sym_size(0));
  return {wrap_dim("segment_reduce", "dim", dim, src.dim()), op};
}

SegmentReduceArgs segment_reduce_backward_check(const at::Tensor& grad, const at::Tensor& src,
                                                const at::Tensor& offsets, const at::Tensor& out,
                                                c10::string_view reduce, int64_t dim) {
  const SegmentReduceArgs args = segment_reduce_check(src, offsets, reduce, dim);
  GPUPRIM_CHECK_ARG(args.reduce != Reduce::kProd, "segment_reduce_backward", "reduce",
                    "'sum', 'mean', 'max' or 'min' (prod's gradient is composed by the autograd)", "'prod'");
  const auto sizes = segment_reduce_out_sizes(src, offsets, args.dim);
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor&>{"grad", grad}, {"out", out}}) {
    check_same_device("segment_reduce_backward", src, name, t);
    GPUPRIM_CHECK_ARG(t.sym_sizes().equals(sizes), "segment_reduce_backward", name,
                      c10::str("of the forward output's shape ", c10::SymIntArrayRef(sizes)), t.sym_sizes());
    GPUPRIM_CHECK_DTYPE(t.scalar_type() == src.scalar_type(), "segment_reduce_backward", name,
                        c10::str("of src's dtype ", src.scalar_type()), t.scalar_type());
  }
  return args;
}

std::vector<c10::SymInt> segment_reduce_out_sizes(const at::Tensor& src, const at::Tensor& offsets, int64_t dim) {
  std::vector<c10::SymInt> sizes(src.sym_sizes().begin(), src.sym_sizes().end());
  sizes[dim] = offsets.sym_size(0) - 1;
  return sizes;
}

void segment_reduce_check_offsets(const std::vector<int64_t>& offsets, int64_t rows, InputOp op) {
  if (offsets[0] != 0) raise_input_error(op, InputArg::kOffsets, InputRule::kNonZeroStart, 0, offsets[0], 0);
  for (size_t k = 1; k < offsets.size(); ++k) {
    if (offsets[k] < offsets[k - 1]) {
      raise_input_error(op, InputArg::kOffsets, InputRule::kDecreasing, k, offsets[k], offsets[k - 1]);
    }
  }
  if (offsets.back() != rows) {
    raise_input_error(op, InputArg::kOffsets, offsets.back() > rows ? InputRule::kPastEnd : InputRule::kNotAtEnd,
                      offsets.size() - 1, offsets.back(), rows);
  }
}

SegmentShape segment_shape(const at::Tensor& src, const at::Tensor& offsets, int64_t dim) {
  const int64_t rows = src.size(dim);
  const int64_t inner = c10::multiply_integers(src.sizes().slice(dim + 1));
  const int64_t outer = c10::multiply_integers(src.sizes().slice(0, dim));
  return {outer, rows, inner, offsets.size(0) - 1};
}

}  // namespace gpuprim
