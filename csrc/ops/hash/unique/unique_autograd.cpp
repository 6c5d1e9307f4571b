// gpuprim::unique has no gradient (like torch.unique): autograd raises a clear error if x requires grad.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("unique", torch::autograd::autogradNotImplementedFallback()); }
