// gpuprim::run_length_encode has no gradient (like torch.unique_consecutive's outputs here: the
// run structure is piecewise constant in x): autograd raises a clear error if x requires grad.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  m.impl("run_length_encode", torch::autograd::autogradNotImplementedFallback());
}
