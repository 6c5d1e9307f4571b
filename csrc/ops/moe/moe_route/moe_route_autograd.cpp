// gpuprim::moe_route_metadata has no gradient: its outputs are integers and the gates are only compared. Its
// Autograd kernel runs the op below autograd (no graph node, unboxed: the boxed not-implemented fallback cost
// host time on every moe_route). The gates' gradient flows through moe_unpermute and topk_gating instead.
#include <torch/library.h>

#include "include/gpuprim/gpuprim.h"
#include "ops/moe/moe_route/moe_route.h"

namespace gpuprim {
namespace {

MoeRouteMetadata moe_route_metadata_autograd(const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts,
                                             std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop) {
  const at::AutoDispatchBelowADInplaceOrView guard;
  return gpuprim::moe_route_metadata(expert_ids, gates, num_experts, capacity, pad_to, drop);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Autograd, m) { m.impl("moe_route_metadata", &moe_route_metadata_autograd); }

}  // namespace gpuprim
