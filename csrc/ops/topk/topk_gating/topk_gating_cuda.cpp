// CUDA glue of gpuprim::topk_gating: checks, outputs, stream; kernels in topk_gating_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/registration.h"
#include "common/torch_utils.h"
#include "include/gpuprim/gpuprim.h"
#include "ops/topk/topk_gating/topk_gating.h"
#include "ops/topk/topk_gating/topk_gating_launch.h"

namespace gpuprim {
namespace {

// topk_gating with options: the routed kernel up to kGatingRoutedMaxExperts experts; beyond, without bias or
// groups, the plain path then the scaling and the cast (the same bits as the fused store).
void topk_gating_routed_cuda(const at::Tensor& input, int64_t k, gating::Score kind, bool renormalize,
                             const GatingOptions& options, at::Tensor& gates, at::Tensor& expert_ids);

std::tuple<at::Tensor, at::Tensor> topk_gating_cuda(const at::Tensor& logits, int64_t k, c10::string_view score,
                                                    bool renormalize, const std::optional<at::Tensor>& bias,
                                                    std::optional<int64_t> num_groups,
                                                    std::optional<int64_t> topk_groups, double scaling,
                                                    std::optional<at::ScalarType> gate_dtype) {
  check_input_errors(logits.device());  // what earlier calls' kernels found (no sync)
  const gating::Score kind = topk_gating_check(logits, k, score);
  const GatingOptions options =
      topk_gating_options_check(logits, k, bias, num_groups, topk_groups, scaling, gate_dtype);
  const c10::cuda::CUDAGuard guard(logits.device());
  const int64_t tokens = logits.size(0), experts = logits.size(1);
  at::Tensor gates, expert_ids;
  std::tie(gates, expert_ids) = topk_gating_outputs(logits, k, options.gate_dtype);
  if (gates.numel() == 0) return {gates, expert_ids};
  const at::Tensor input = logits.contiguous();
  if (options.routed()) {
    topk_gating_routed_cuda(input, k, kind, renormalize, options, gates, expert_ids);
    return {gates, expert_ids};
  }
  const DType type = to_dtype(input.scalar_type());
  if (experts <= kGatingFusedMaxExperts && k <= kGatingFusedMaxK) {
    topk_gating_fused_launch(input.const_data_ptr(), type, tokens, experts, k, kind, renormalize,
                             gates.mutable_data_ptr<float>(), expert_ids.mutable_data_ptr<int64_t>(), current_stream());
  } else {
    // Same ranking as the fused kernel: topk orders by value with ties to the lower index.
    expert_ids.copy_(std::get<1>(gpuprim::topk(input, k, 1, /*largest=*/true, /*sorted=*/true)));
    topk_gating_gates_launch(input.const_data_ptr(), type, tokens, experts, k, expert_ids.const_data_ptr<int64_t>(),
                             kind, renormalize, gates.mutable_data_ptr<float>(), current_stream());
  }
  return {gates, expert_ids};
}

void topk_gating_routed_cuda(const at::Tensor& input, int64_t k, gating::Score kind, bool renormalize,
                             const GatingOptions& options, at::Tensor& gates, at::Tensor& expert_ids) {
  const int64_t tokens = input.size(0), experts = input.size(1);
  if (experts > kGatingRoutedMaxExperts || k > kGatingFusedMaxK) {
    GPUPRIM_CHECK_ARG(!options.by_score(), "topk_gating", "logits",
                      c10::str("of at most ", kGatingRoutedMaxExperts, " experts and k <= ", kGatingFusedMaxK,
                               " on CUDA with bias or num_groups"),
                      c10::str(experts, " experts, k = ", k));
    auto [plain, ids] = topk_gating_cuda(input, k, kind == gating::Score::kSoftmax ? "softmax" : "sigmoid",
                                         renormalize, std::nullopt, std::nullopt, std::nullopt, 1.0, std::nullopt);
    gates.copy_(options.scaling != 1.0 ? plain * options.scaling : plain);
    expert_ids.copy_(ids);
    return;
  }
  const at::Tensor bias = options.bias.has_value() ? options.bias->to(at::kFloat).contiguous() : at::Tensor();
  const GatingRoute route{bias.defined() ? bias.const_data_ptr<float>() : nullptr,
                          int(options.num_groups),
                          int(options.topk_groups),
                          static_cast<float>(options.scaling),
                          options.by_score(),
                          to_dtype(options.gate_dtype)};
  topk_gating_routed_launch(input.const_data_ptr(), to_dtype(input.scalar_type()), tokens, experts, k, kind,
                            renormalize, route, gates.mutable_data_ptr(), expert_ids.mutable_data_ptr<int64_t>(),
                            current_stream());
}

at::Tensor topk_gating_backward_cuda(const at::Tensor& grad_gates, const at::Tensor& logits, const at::Tensor& gates,
                                     const at::Tensor& expert_ids, c10::string_view score, bool renormalize) {
  check_input_errors(logits.device());
  topk_gating_backward_check(grad_gates, logits, gates, expert_ids, score);
  const c10::cuda::CUDAGuard guard(logits.device());
  const at::Tensor input = logits.contiguous();
  at::Tensor grad_logits = at::empty(input.sizes(), input.options());
  if (grad_logits.numel() == 0) return grad_logits;
  const at::Tensor dg = grad_gates.to(at::kFloat).contiguous(), g = gates.to(at::kFloat).contiguous();
  const at::Tensor ids = expert_ids.contiguous();
  topk_gating_backward_launch(dg.const_data_ptr<float>(), input.const_data_ptr(), to_dtype(input.scalar_type()),
                              g.const_data_ptr<float>(), ids.const_data_ptr<int64_t>(), input.size(0), input.size(1),
                              gates.size(1), score == "softmax" ? gating::Score::kSoftmax : gating::Score::kSigmoid,
                              renormalize, grad_logits.mutable_data_ptr(), current_stream());
  return grad_logits;
}

}  // namespace

GPUPRIM_IMPL_WITH_BACKWARD(CUDA, topk_gating, cuda)

}  // namespace gpuprim
