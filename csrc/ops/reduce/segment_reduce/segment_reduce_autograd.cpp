// Autograd of gpuprim::segment_reduce. The forward re-dispatches below autograd; the backward is its own
// registered op (gpuprim::segment_reduce_backward, with CPU/CUDA/Meta kernels) so torch.compile traces it.
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "common/autograd_utils.h"
#include "common/registration.h"
#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

// prod's gradient, as torch's: grad * out / src in a segment without zeros; in a segment with one zero, the
// product of the others at the zero and 0 elsewhere; 0 with more zeros. Composed of ops (no sync).
at::Tensor prod_backward(const at::Tensor& grad, const at::Tensor& src, const at::Tensor& offsets,
                         const at::Tensor& out, int64_t dim) {
  const int64_t d = dim < 0 ? dim + src.dim() : dim;
  const at::Tensor starts = offsets.to(at::kLong);
  const at::Tensor lengths = starts.slice(0, 1) - starts.slice(0, 0, -1);
  // Each row's segment: repeat_interleave(repeats, output_size) (no sync).
  const at::Tensor segment = at::repeat_interleave_symint(lengths, std::optional<c10::SymInt>(src.sym_size(d)));
  const at::Tensor zero = src == 0;
  const at::ScalarType count_type = src.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor zeros = gpuprim::segment_reduce(zero.to(count_type), offsets, "sum", d).index_select(d, segment);
  const at::Tensor others =
      gpuprim::segment_reduce(src.masked_fill(zero, 1), offsets, "prod", d).index_select(d, segment);
  const at::Tensor g = grad.index_select(d, segment);
  const at::Tensor no_zero = g * out.index_select(d, segment) / src.masked_fill(zero, 1);
  const at::Tensor one_zero = at::where(zero, g * others, at::zeros_like(g));
  return at::where(zeros == 0, no_zero, at::where(zeros == 1, one_zero, at::zeros_like(g)));
}

class SegmentReduceFunction : public torch::autograd::Function<SegmentReduceFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& src, const at::Tensor& offsets,
                            c10::string_view reduce, int64_t dim) {
    at::Tensor out;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = gpuprim::segment_reduce(src, offsets, reduce, dim);
    }
    ctx->saved_data["reduce"] = std::string(reduce);
    ctx->saved_data["dim"] = dim;
    // max/min need src and the forward result to find the arg-extreme rows (sum/mean read only shapes).
    ctx->save_for_backward({src, offsets, out});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    if (ctx->saved_data["reduce"].toStringRef() == "prod") {
      return {prod_backward(grads[0], saved[0], saved[1], saved[2], ctx->saved_data["dim"].toInt()), at::Tensor(),
              at::Tensor(), at::Tensor()};
    }
    const at::Tensor grad_src =
        gpuprim::segment_reduce_backward(grads[0], saved[0], saved[1], saved[2],
                                         ctx->saved_data["reduce"].toStringRef(), ctx->saved_data["dim"].toInt());
    return {grad_src, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor segment_reduce_autograd(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce,
                                   int64_t dim) {
  if (!autograd_needed(src)) {
    // Nothing to record: the op below autograd, without a node's host cost.
    at::AutoDispatchBelowADInplaceOrView guard;
    return gpuprim::segment_reduce(src, offsets, reduce, dim);
  }
  return SegmentReduceFunction::apply(src, offsets, reduce, dim);
}

}  // namespace

// The backward op is not differentiable itself (no double backward): a clear error if someone asks for one.
TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "segment_reduce", &segment_reduce_autograd,
       "segment_reduce_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
