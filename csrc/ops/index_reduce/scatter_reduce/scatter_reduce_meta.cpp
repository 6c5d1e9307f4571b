// Shape function of gpuprim::scatter_reduce (SymInt-safe, no data access): the output is input-shaped.
#include <torch/library.h>

#include "common/input_errors.h"
#include "ops/index_reduce/scatter_reduce/scatter_reduce.h"

namespace gpuprim {
namespace {

at::Tensor scatter_reduce_meta(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, bool /*include_self*/, std::optional<bool> /*deterministic*/,
                               InputOp op) {
  scatter_reduce_check(input, dim, index, src, reduce, input_op_name(op));
  return at::empty_symint(input.sym_sizes(), input.options().memory_format(at::MemoryFormat::Contiguous));
}

void scatter_reduce_meta_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce, bool /*include_self*/, std::optional<bool> /*deterministic*/,
                          InputOp op) {
  scatter_reduce_check(input, dim, index, src, reduce, input_op_name(op));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) {
  register_scatter_reduce_kernels<&scatter_reduce_meta, &scatter_reduce_meta_>(m);
}

}  // namespace gpuprim
