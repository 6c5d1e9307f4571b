// gpuprim::bfs is not differentiable (integer outputs): the fallback gives a clear error.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

namespace gpuprim {

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("bfs", torch::autograd::autogradNotImplementedFallback()); }

}  // namespace gpuprim
