// gpuprim::moe_route and gpuprim::moe_route_metadata — declarations shared by their CPU, CUDA, Meta and
// composite files.
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>
#include <optional>
#include <tuple>

#include "ops/moe/moe_route/moe_route_launch.h"

namespace gpuprim {

struct MoeRouteArgs {
  int64_t num_experts;
  int64_t capacity;  // -1: none
  int64_t pad_to;
  MoeDrop drop;
};

// The routing options of both ops, in one place: num_experts >= 1, 1 <= k <= num_experts, capacity >= 0 or
// None, pad_to >= 1, drop "position" or "score". Messages name `op`; k_source says where k came from.
MoeRouteArgs moe_route_check_options(const char* op, int64_t num_experts, const c10::SymInt& k,
                                     const char* k_source, std::optional<int64_t> capacity, int64_t pad_to,
                                     c10::string_view drop);

// Checks everything that can be checked without reading data (SymInt-safe: also used by the Meta kernel).
MoeRouteArgs moe_route_metadata_check(const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts,
                                      std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop);

using MoeRouteMetadata = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

// moe_route's own checks (logits 2-D, then the routing options with k against E = logits.size(1)); returns E.
// topk_gating checks what it alone reads: the logits' dtype and the score.
int64_t moe_route_check(const at::Tensor& logits, int64_t k, std::optional<int64_t> capacity, int64_t pad_to,
                        c10::string_view drop);

// (counts [E], offsets [E + 1], slots [T, k], token_ids [R], num_dropped [1]), int64, uninitialized.
// R = T * k + E * (pad_to - 1) without a capacity, E * round_up(capacity, pad_to) with one.
MoeRouteMetadata moe_route_metadata_outputs(const at::Tensor& expert_ids, const MoeRouteArgs& args);

}  // namespace gpuprim
