// gpuprim::bincount has no gradient (counts are piecewise constant in x; like torch.bincount,
// weights get none either): autograd raises a clear error if a weight requires grad.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  m.impl("bincount", torch::autograd::autogradNotImplementedFallback());
}
