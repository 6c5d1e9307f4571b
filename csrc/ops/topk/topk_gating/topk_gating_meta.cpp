// Shape functions of gpuprim::topk_gating and its backward (SymInt-safe, no data access).
#include <torch/library.h>

#include "common/registration.h"
#include "ops/topk/topk_gating/topk_gating.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> topk_gating_meta(const at::Tensor& logits, int64_t k, c10::string_view score,
                                                    bool /*renormalize*/, const std::optional<at::Tensor>& bias,
                                                    std::optional<int64_t> num_groups,
                                                    std::optional<int64_t> topk_groups, double scaling,
                                                    std::optional<at::ScalarType> gate_dtype) {
  topk_gating_check(logits, k, score);
  const GatingOptions options =
      topk_gating_options_check(logits, k, bias, num_groups, topk_groups, scaling, gate_dtype);
  const std::vector<c10::SymInt> sizes{logits.sym_size(0), c10::SymInt(k)};
  return {at::empty_symint(sizes, logits.options().dtype(options.gate_dtype)),
          at::empty_symint(sizes, logits.options().dtype(at::kLong))};
}

at::Tensor topk_gating_backward_meta(const at::Tensor& grad_gates, const at::Tensor& logits, const at::Tensor& gates,
                                     const at::Tensor& expert_ids, c10::string_view score, bool /*renormalize*/) {
  topk_gating_backward_check(grad_gates, logits, gates, expert_ids, score);
  return at::empty_symint(logits.sym_sizes(), logits.options().memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(Meta, topk_gating, meta)

}  // namespace gpuprim
