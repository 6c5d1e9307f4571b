// Device-independent parts of gpuprim::moe_route_metadata (argument checks and output shapes, used by its CPU,
// CUDA and Meta kernels) and gpuprim::moe_route, the composition of topk_gating and moe_route_metadata.
//
// moe_route is CompositeImplicitAutograd: its parts' own Autograd, CPU, CUDA and Meta kernels apply, so the gates'
// gradient reaches the logits through topk_gating's backward, fake tensors and torch.compile trace the two parts,
// and there is no second copy of topk_gating's autograd here. The host cost is one dispatcher entry per part.
#include <torch/library.h>

#include <string>
#include <tuple>
#include <utility>

#include "common/gating_args.h"
#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"
#include "ops/moe/moe_route/moe_route.h"

namespace gpuprim {

MoeRouteArgs moe_route_check_options(const char* op, int64_t num_experts, const c10::SymInt& k,
                                     const char* k_source, std::optional<int64_t> capacity, int64_t pad_to,
                                     c10::string_view drop) {
  GPUPRIM_CHECK_ARG(num_experts >= 1, op, "num_experts", ">= 1", num_experts);
  GPUPRIM_CHECK_ARG(k >= 1 && k <= num_experts, op, "k", c10::str("in [1, num_experts = ", num_experts, "]", k_source),
                    k);
  GPUPRIM_CHECK_ARG(!capacity.has_value() || *capacity >= 0, op, "capacity", ">= 0 or None", capacity.value_or(0));
  GPUPRIM_CHECK_ARG(pad_to >= 1, op, "pad_to", ">= 1", pad_to);
  MoeDrop mode = MoeDrop::kPosition;
  if (drop == "score") {
    mode = MoeDrop::kScore;
  } else {
    GPUPRIM_CHECK_ARG(drop == "position", op, "drop", "'position' or 'score'", "'" + std::string(drop) + "'");
  }
  return {num_experts, capacity.value_or(-1), pad_to, mode};
}

MoeRouteArgs moe_route_metadata_check(const at::Tensor& expert_ids, const at::Tensor& gates, int64_t num_experts,
                                      std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop) {
  constexpr const char* op = "moe_route_metadata";
  GPUPRIM_CHECK_ARG(expert_ids.dim() == 2, op, "expert_ids", "2-D [tokens, k]",
                    std::to_string(expert_ids.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(expert_ids.scalar_type() == at::kLong || expert_ids.scalar_type() == at::kInt, op,
                      "expert_ids", "an int64 or int32 tensor", expert_ids.scalar_type());
  check_same_device(op, expert_ids, "gates", gates);
  GPUPRIM_CHECK_DTYPE(at::isFloatingType(gates.scalar_type()), op, "gates", "a floating-point tensor",
                      gates.scalar_type());
  GPUPRIM_CHECK_ARG(gates.sym_sizes().equals(expert_ids.sym_sizes()), op, "gates",
                    c10::str("of expert_ids' shape ", expert_ids.sym_sizes()), gates.sym_sizes());
  return moe_route_check_options(op, num_experts, expert_ids.sym_size(1), " (expert_ids.size(1))", capacity, pad_to,
                                 drop);
}

MoeRouteMetadata moe_route_metadata_outputs(const at::Tensor& expert_ids, const MoeRouteArgs& args) {
  const int64_t experts = args.num_experts;
  const c10::SymInt rows = args.capacity >= 0
                               ? c10::SymInt(experts * ((args.capacity + args.pad_to - 1) / args.pad_to * args.pad_to))
                               : expert_ids.sym_size(0) * expert_ids.sym_size(1) + experts * (args.pad_to - 1);
  const auto options = expert_ids.options().dtype(at::kLong);
  return {at::empty({experts}, options), at::empty({experts + 1}, options),
          at::empty_symint(expert_ids.sym_sizes(), options), at::empty_symint({rows}, options),
          at::empty({1}, options)};
}

int64_t moe_route_check(const at::Tensor& logits, int64_t k, std::optional<int64_t> capacity, int64_t pad_to,
                        c10::string_view drop) {
  constexpr const char* op = "moe_route";
  GPUPRIM_CHECK_ARG(logits.dim() == 2, op, "logits", "2-D [tokens, num_experts]",
                    std::to_string(logits.dim()) + "-D tensor");
  // E sizes moe_route_metadata's outputs: a model constant, specialized under torch.compile.
  const int64_t experts = logits.sym_size(1).guard_int(__FILE__, __LINE__);
  moe_route_check_options(op, experts, k, "", capacity, pad_to, drop);
  return experts;
}

namespace {

MoeRouting moe_route_composite(const at::Tensor& logits, int64_t k, c10::string_view score, bool renormalize,
                               std::optional<int64_t> capacity, int64_t pad_to, c10::string_view drop,
                               const std::optional<at::Tensor>& bias, std::optional<int64_t> num_groups,
                               std::optional<int64_t> topk_groups, double scaling,
                               std::optional<at::ScalarType> gate_dtype) {
  const int64_t experts = moe_route_check(logits, k, capacity, pad_to, drop);
  check_gating_logits("moe_route", logits, k, score);  // errors name the op called, not topk_gating
  check_gating_options("moe_route", logits, k, bias, num_groups, topk_groups, scaling, gate_dtype);
  auto gating = gpuprim::topk_gating(logits, k, score, renormalize, bias, num_groups, topk_groups, scaling,
                                     gate_dtype);  // (gates, expert_ids)
  auto metadata =
      gpuprim::moe_route_metadata(std::get<1>(gating), std::get<0>(gating), experts, capacity, pad_to, drop);
  return std::tuple_cat(std::move(gating), std::move(metadata));
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CompositeImplicitAutograd, m) { m.impl("moe_route", &moe_route_composite); }

}  // namespace gpuprim
