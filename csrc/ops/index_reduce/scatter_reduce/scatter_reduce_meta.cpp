// Shape function of gpuprim::scatter_reduce (SymInt-safe, no data access): the output is input-shaped.
#include <torch/library.h>

#include "ops/index_reduce/scatter_reduce/scatter_reduce.h"

namespace gpuprim {
namespace {

at::Tensor scatter_reduce_meta(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, bool /*include_self*/, std::optional<bool> /*deterministic*/) {
  scatter_reduce_check(input, dim, index, src, reduce);
  return at::empty_symint(input.sym_sizes(), input.options().memory_format(at::MemoryFormat::Contiguous));
}

void scatter_reduce_meta_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce, bool /*include_self*/, std::optional<bool> /*deterministic*/) {
  scatter_reduce_check(input, dim, index, src, reduce);
}

at::Tensor scatter_add_meta(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            std::optional<bool> /*deterministic*/) {
  scatter_reduce_check(input, dim, index, src, "sum", "scatter_add");
  return at::empty_symint(input.sym_sizes(), input.options().memory_format(at::MemoryFormat::Contiguous));
}

void scatter_add_meta_(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                       std::optional<bool> /*deterministic*/) {
  scatter_reduce_check(input, dim, index, src, "sum", "scatter_add_");
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) {
  m.impl("scatter_add", &scatter_add_meta);
  m.impl("scatter_add_", &scatter_add_meta_);
  m.impl("scatter_reduce", &scatter_reduce_meta);
  m.impl("scatter_reduce_", &scatter_reduce_meta_);
}

}  // namespace gpuprim
