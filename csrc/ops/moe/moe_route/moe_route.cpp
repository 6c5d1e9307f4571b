// Device-independent parts of gpuprim::moe_route_metadata: argument checks and output shapes, used by its CPU,
// CUDA and Meta kernels.
#include <string>

#include "common/torch_utils.h"
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

}  // namespace gpuprim
