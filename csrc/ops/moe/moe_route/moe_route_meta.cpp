// Shape function of gpuprim::moe_route_metadata: every size is fixed by the arguments, never by the data.
#include <torch/library.h>

#include "ops/moe/moe_route/moe_route.h"

namespace gpuprim {
namespace {

MoeRouteMetadata moe_route_metadata_meta(const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts,
                                         std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop) {
  const MoeRouteArgs args = moe_route_metadata_check(expert_ids, gates, num_experts, capacity, pad_to, drop);
  return moe_route_metadata_outputs(expert_ids, args);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("moe_route_metadata", &moe_route_metadata_meta); }

}  // namespace gpuprim
