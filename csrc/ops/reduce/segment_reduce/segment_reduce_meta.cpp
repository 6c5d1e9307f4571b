// Shape functions of gpuprim::segment_reduce and its backward (SymInt-safe, no data access).
#include <torch/library.h>

#include "common/registration.h"
#include "ops/reduce/segment_reduce/segment_reduce.h"

namespace gpuprim {
namespace {

at::Tensor segment_reduce_meta(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce,
                               int64_t dim) {
  const SegmentReduceArgs args = segment_reduce_check(src, offsets, reduce, dim);
  return at::empty_symint(segment_reduce_out_sizes(src, offsets, args.dim), src.options());
}

at::Tensor segment_reduce_backward_meta(const at::Tensor& grad, const at::Tensor& src, const at::Tensor& offsets,
                                        const at::Tensor& out, c10::string_view reduce, int64_t dim) {
  segment_reduce_backward_check(grad, src, offsets, out, reduce, dim);
  return at::empty_symint(src.sym_sizes(), src.options().memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(Meta, segment_reduce, meta)

}  // namespace gpuprim
