// gpuprim::sort_pairs is not differentiable (it returns no permutation to send gradients back
// through): autograd raises a clear error if an input requires grad. gpuprim.sort's indices and
// index_select give the differentiable equivalent.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("sort_pairs", torch::autograd::autogradNotImplementedFallback()); }
