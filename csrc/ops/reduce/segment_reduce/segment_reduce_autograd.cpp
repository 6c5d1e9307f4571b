// Autograd of gpuprim::segment_reduce. The forward re-dispatches below autograd; the backward is its own
// registered op (gpuprim::segment_reduce_backward, with CPU/CUDA/Meta kernels) so torch.compile traces it.
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "include/gpuprim/gpuprim.h"

namespace gpuprim {
namespace {

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
    const at::Tensor grad_src =
        gpuprim::segment_reduce_backward(grads[0], saved[0], saved[1], saved[2],
                                         ctx->saved_data["reduce"].toStringRef(), ctx->saved_data["dim"].toInt());
    return {grad_src, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor segment_reduce_autograd(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce,
                                   int64_t dim) {
  return SegmentReduceFunction::apply(src, offsets, reduce, dim);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  m.impl("segment_reduce", &segment_reduce_autograd);
  // Not differentiable itself (no double backward): a clear error if someone asks for one.
  m.impl("segment_reduce_backward", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
