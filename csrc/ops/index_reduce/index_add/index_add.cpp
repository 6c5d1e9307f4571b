// Device-independent parts of gpuprim::index_add: argument checks and shape rules (CPU, CUDA, Meta).
#include <string>
#include <vector>

#include "common/input_errors.h"
#include "common/torch_utils.h"
#include "ops/index_reduce/index_add/index_add.h"

namespace gpuprim {

bool index_reduce_dtype_ok(at::ScalarType type) {
  switch (type) {
    case at::kBool: case at::kByte: case at::kChar: case at::kShort: case at::kInt: case at::kLong:
    case at::kHalf: case at::kBFloat16: case at::kFloat: case at::kDouble: return true;
    default: return false;
  }
}

Reduce bool_reduce(Reduce reduce) {
  return reduce == Reduce::kMin || reduce == Reduce::kProd ? Reduce::kMin : Reduce::kMax;
}

void check_index_reduce_operands(const char* op, const at::Tensor& input, const at::Tensor& index,
                                 const at::Tensor& source, const char* source_name) {
  GPUPRIM_CHECK_DTYPE(source.scalar_type() == input.scalar_type(), op, source_name,
                      c10::str("of input's dtype ", input.scalar_type()), source.scalar_type());
  GPUPRIM_CHECK_DTYPE(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op, "index",
                      "an int32 or int64 tensor", index.scalar_type());
  check_same_device(op, input, "index", index);
  check_same_device(op, input, source_name, source);
}

int64_t index_add_check(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                        const c10::Scalar& alpha) {
  const char* op = "index_add";
  GPUPRIM_CHECK_DTYPE(index_reduce_dtype_ok(input.scalar_type()), op, "input",
                      "a bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32 or float64 tensor",
                      input.scalar_type());
  check_index_reduce_operands(op, input, index, source, "source");
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

void check_index_range(InputOp op, const at::Tensor& index, int64_t rows, int64_t dim) {
  if (index.numel() == 0) return;
  const at::Tensor flat = index.contiguous().view(-1).to(at::kLong);
  const int64_t* values = flat.const_data_ptr<int64_t>();
  for (int64_t p = 0; p < flat.numel(); ++p) {
    if (values[p] < 0 || values[p] >= rows) {
      raise_input_error(op, InputArg::kIndex, InputRule::kOutOfRange, p, values[p], rows, static_cast<int>(dim),
                        /*flattened=*/index.dim() > 1);
    }
  }
}

}  // namespace gpuprim
