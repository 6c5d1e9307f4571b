// gpuprim::histogram has no gradient (like bincount): autograd raises a clear error if an input
// requires grad.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("histogram", torch::autograd::autogradNotImplementedFallback()); }
