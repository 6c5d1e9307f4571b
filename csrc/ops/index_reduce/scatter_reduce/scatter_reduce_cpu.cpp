// CPU kernel of gpuprim::scatter_reduce: index_add's CPU engine over flattened elements, in index order.
#include <torch/library.h>

#include <string>

#include "common/input_errors.h"
#include "common/torch_utils.h"
#include "ops/index_reduce/scatter_reduce/scatter_reduce.h"

namespace gpuprim {

namespace {

// deterministic: the CPU reduces in order.
at::Tensor scatter_reduce_cpu(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                              c10::string_view reduce, bool include_self, std::optional<bool> /*deterministic*/,
                              InputOp op) {
  const ScatterReduceArgs args = scatter_reduce_check(input, dim, index, src, reduce, input_op_name(op));
  at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
  if (index.numel() == 0 || input.numel() == 0) return out;
  check_index_range(op, index, input.dim() == 0 ? 1 : input.size(args.dim), args.dim);
  const IndexReduceShape shape{1, index.numel(), input.numel(), 1};
  index_reduce_cpu_kernel(scatter_destinations(input, args.dim, index), scatter_source(src, index), shape,
                          args.reduce, include_self, 1, out);
  return out;
}

void scatter_reduce_cpu_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                         c10::string_view reduce, bool include_self, std::optional<bool> deterministic, InputOp op) {
  const_cast<at::Tensor&>(input).copy_(
      scatter_reduce_cpu(input, dim, index, src, reduce, include_self, deterministic, op));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) {
  register_scatter_reduce_kernels<&scatter_reduce_cpu, &scatter_reduce_cpu_>(m);
}

}  // namespace gpuprim
