// Device-independent parts of gpuprim::spmm: argument checks and shape rules (CPU, CUDA, Meta).
#include "ops/graph/spmm/spmm.h"

#include <string>

#include "common/choice.h"
#include "common/input_errors.h"
#include "common/torch_utils.h"
#include "ops/graph/csr_checks.h"

namespace gpuprim {

namespace {

Reduce parse_reduce(c10::string_view reduce) {
  return parse_choice<Reduce>("spmm", "reduce", reduce,
                              {{"sum", Reduce::kSum}, {"mean", Reduce::kMean}, {"max", Reduce::kMax},
                               {"min", Reduce::kMin}});
}

bool is_float(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble;
}

}  // namespace

Reduce spmm_check(const at::Tensor& crow, const at::Tensor& col, const std::optional<at::Tensor>& values,
                  const at::Tensor& dense, c10::string_view reduce) {
  const Reduce op = parse_reduce(reduce);
  GPUPRIM_CHECK_DTYPE(is_float(dense.scalar_type()), "spmm", "dense", "a float16, bfloat16, float32 or float64 tensor",
                      dense.scalar_type());
  GPUPRIM_CHECK_ARG(dense.dim() == 1 || dense.dim() == 2, "spmm", "dense", "1-D or 2-D",
                    std::to_string(dense.dim()) + "-D tensor");
  check_csr_arguments("spmm", crow, col, "rows");
  check_same_device("spmm", dense, "crow", crow);
  check_same_device("spmm", dense, "col", col);
  if (values.has_value()) {
    check_same_device("spmm", dense, "values", *values);
    GPUPRIM_CHECK_DTYPE(values->scalar_type() == dense.scalar_type(), "spmm", "values",
                        c10::str("of dense's dtype ", dense.scalar_type()), values->scalar_type());
    GPUPRIM_CHECK_ARG(values->dim() == 1 && values->sym_size(0) == col.sym_size(0), "spmm", "values",
                      c10::str("1-D of col's length ", col.sym_size(0)), values->sym_sizes());
  }
  return op;
}

Reduce spmm_backward_check(const at::Tensor& grad, const at::Tensor& crow, const at::Tensor& col,
                           const at::Tensor& dense, c10::string_view reduce) {
  const Reduce op = spmm_check(crow, col, std::nullopt, dense, reduce);
  check_same_device("spmm_backward", dense, "grad", grad);
  const auto sizes = spmm_out_sizes(crow, dense);
  GPUPRIM_CHECK_ARG(grad.sym_sizes().equals(sizes), "spmm_backward", "grad",
                    c10::str("of the forward output's shape ", c10::SymIntArrayRef(sizes)), grad.sym_sizes());
  GPUPRIM_CHECK_DTYPE(grad.scalar_type() == dense.scalar_type(), "spmm_backward", "grad",
                      c10::str("of dense's dtype ", dense.scalar_type()), grad.scalar_type());
  GPUPRIM_CHECK_ARG(op == Reduce::kSum || op == Reduce::kMean, "spmm_backward", "reduce", "'sum' or 'mean'",
                    "'" + std::string(reduce) + "'");
  return op;
}

std::vector<c10::SymInt> spmm_out_sizes(const at::Tensor& crow, const at::Tensor& dense) {
  std::vector<c10::SymInt> sizes{crow.sym_size(0) - 1};
  if (dense.dim() == 2) sizes.push_back(dense.sym_size(1));
  return sizes;
}

void spmm_check_structure(const std::vector<int64_t>& crow, const at::Tensor& col, int64_t cols, InputOp op) {
  const at::Tensor c = col.to(at::kLong).contiguous();
  check_csr_structure(op, crow.data(), static_cast<int64_t>(crow.size()) - 1, c.const_data_ptr<int64_t>(), c.numel(),
                      cols);
}

SpmmShape spmm_shape(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& dense) {
  return {crow.size(0) - 1, dense.size(0), col.size(0), dense.dim() == 2 ? dense.size(1) : 1};
}

}  // namespace gpuprim
