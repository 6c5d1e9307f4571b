// CPU kernel of gpuprim::moe_route_metadata: the readable reference for the CUDA kernels.
#include <torch/library.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/input_errors.h"
#include "ops/moe/moe_common.h"
#include "ops/moe/moe_route/moe_route.h"

namespace gpuprim {
namespace {

MoeRouteMetadata moe_route_metadata_cpu(const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts,
                                        std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop) {
  const MoeRouteArgs args = moe_route_metadata_check(expert_ids, gates, num_experts, capacity, pad_to, drop);
  auto [counts, offsets, slots, token_ids, num_dropped] = moe_route_metadata_outputs(expert_ids, args);
  const at::Tensor ids_t = moe_contiguous_as(expert_ids, at::kLong);
  const int64_t k = expert_ids.size(1), n = ids_t.numel(), experts = num_experts;
  const int64_t* ids = ids_t.const_data_ptr<int64_t>();
  const int64_t limit = args.capacity >= 0 ? args.capacity : n;

  // Which (token, choice) pairs each expert keeps, in flat (token, then choice) order.
  std::vector<std::vector<int64_t>> routed(experts);
  for (int64_t flat = 0; flat < n; ++flat) {
    const int64_t e = ids[flat];
    if (e < 0 || e >= experts) {
      raise_input_error(InputOp::kMoeRouteMetadata, InputArg::kExpertIds, InputRule::kOutOfIdRange, flat, e, experts,
                        0, /*flattened=*/true);
    }
    routed[e].push_back(flat);
  }
  std::vector<uint8_t> keep(n, 0);
  if (args.drop == MoeDrop::kScore && args.capacity >= 0) {
    // The `capacity` highest gates (compared as fp32), ties to the lower token index (stable sort).
    const at::Tensor g_t = moe_contiguous_as(gates, at::kFloat);
    const float* g = g_t.const_data_ptr<float>();
    for (auto& list : routed) {
      std::vector<int64_t> by_score = list;
      std::stable_sort(by_score.begin(), by_score.end(),
                       [&](int64_t a, int64_t b) { return moe_score_key(g[a]) < moe_score_key(g[b]); });
      for (int64_t i = 0; i < std::min<int64_t>(limit, by_score.size()); ++i) keep[by_score[i]] = 1;
    }
  } else {
    for (auto& list : routed) {
      for (int64_t i = 0; i < std::min<int64_t>(limit, list.size()); ++i) keep[list[i]] = 1;
    }
  }

  int64_t* count = counts.mutable_data_ptr<int64_t>();
  int64_t* offset = offsets.mutable_data_ptr<int64_t>();
  int64_t kept_total = 0;
  offset[0] = 0;
  for (int64_t e = 0; e < experts; ++e) {
    count[e] = std::min<int64_t>(limit, routed[e].size());
    kept_total += count[e];
    offset[e + 1] = offset[e] + (count[e] + pad_to - 1) / pad_to * pad_to;
  }
  num_dropped.fill_(n - kept_total);
  token_ids.fill_(-1);
  int64_t* slot = slots.mutable_data_ptr<int64_t>();
  int64_t* token = token_ids.mutable_data_ptr<int64_t>();
  std::vector<int64_t> cursor(offset, offset + experts);
  for (int64_t flat = 0; flat < n; ++flat) {
    if (!keep[flat]) {
      slot[flat] = -1;
      continue;
    }
    const int64_t row = cursor[ids[flat]]++;
    slot[flat] = row;
    token[row] = flat / k;
  }
  return {counts, offsets, slots, token_ids, num_dropped};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("moe_route_metadata", &moe_route_metadata_cpu); }

}  // namespace gpuprim
