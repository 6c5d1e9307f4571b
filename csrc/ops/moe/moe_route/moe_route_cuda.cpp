// CUDA glue of gpuprim::moe_route_metadata: checks, outputs, stream and workspace; kernels in moe_route_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <limits>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/moe/moe_common.h"
#include "ops/moe/moe_route/moe_route.h"

namespace gpuprim {
namespace {

MoeRouteMetadata moe_route_metadata_cuda(const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts,
                                         std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop) {
  const InputErrorScope errors(expert_ids.device(), InputOp::kMoeRouteMetadata);
  const MoeRouteArgs args = moe_route_metadata_check(expert_ids, gates, num_experts, capacity, pad_to, drop);
  GPUPRIM_CHECK_ARG(expert_ids.numel() < std::numeric_limits<int32_t>::max(), "moe_route_metadata", "expert_ids",
                    "of fewer than 2^31 - 1 elements on CUDA", expert_ids.numel());
  const c10::cuda::CUDAGuard guard(expert_ids.device());
  auto outputs = moe_route_metadata_outputs(expert_ids, args);
  auto& [counts, offsets, slots, token_ids, num_dropped] = outputs;
  const at::Tensor ids = moe_contiguous_as(expert_ids, at::kLong);
  const bool by_score = args.drop == MoeDrop::kScore && args.capacity >= 0;
  const at::Tensor g = by_score ? moe_contiguous_as(gates, at::kFloat) : at::Tensor();
  const MoeRouteShape shape{expert_ids.size(0), expert_ids.size(1), num_experts, args.capacity, pad_to,
                            token_ids.size(0), args.drop,
                            errors.check(InputArg::kExpertIds, InputRule::kOutOfIdRange, num_experts, 0,
                                         /*flattened=*/true)};
  TorchWorkspace workspace(expert_ids.device());
  moe_route_metadata_cuda_launch(ids.const_data_ptr<int64_t>(), by_score ? g.const_data_ptr<float>() : nullptr,
                                 shape, counts.mutable_data_ptr<int64_t>(), offsets.mutable_data_ptr<int64_t>(),
                                 slots.mutable_data_ptr<int64_t>(), token_ids.mutable_data_ptr<int64_t>(),
                                 num_dropped.mutable_data_ptr<int64_t>(), workspace, current_stream());
  return outputs;
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("moe_route_metadata", &moe_route_metadata_cuda); }

}  // namespace gpuprim
