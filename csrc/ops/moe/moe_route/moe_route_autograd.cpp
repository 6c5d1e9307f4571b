// gpuprim::moe_route_metadata has no gradient (integer outputs; gates are only compared): autograd raises a
// clear error if asked to differentiate through it. The gates' gradient flows through moe_unpermute instead.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  m.impl("moe_route_metadata", torch::autograd::autogradNotImplementedFallback());
}
