// The hash map ops have no gradient (lookups of stored bits). Lookups get autograd's fallback (a clear error
// if anything would need a gradient); the in-place insert runs below autograd and bumps the versions of the
// table's tensors, as an in-place op must.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "common/registration.h"
#include "common/torch_utils.h"

namespace gpuprim {
namespace {

void hash_map_insert_autograd_(const at::Tensor& keys, const at::Tensor& values, const at::Tensor& state,
                               const at::Tensor& new_keys, const at::Tensor& new_values) {
  TORCH_CHECK(!(at::GradMode::is_enabled() && (values.requires_grad() || new_values.requires_grad())),
              "gpuprim.hash_map_insert_: a hash map's values are not differentiable; detach them first");
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("gpuprim::hash_map_insert_", "")
                               .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                           const at::Tensor&, const at::Tensor&)>();
    op.call(keys, values, state, new_keys, new_values);
  }
  keys.unsafeGetTensorImpl()->bump_version();
  values.unsafeGetTensorImpl()->bump_version();
  state.unsafeGetTensorImpl()->bump_version();
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) {
  impl(m, "hash_map_insert_", &hash_map_insert_autograd_,
       "hash_map_find", torch::autograd::autogradNotImplementedFallback(),
       "hash_map_contains", torch::autograd::autogradNotImplementedFallback());
}

}  // namespace gpuprim
