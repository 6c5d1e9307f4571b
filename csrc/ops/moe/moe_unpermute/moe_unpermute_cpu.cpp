// CPU kernels of gpuprim::moe_unpermute and its backward: the readable reference for the CUDA kernels
// (same rounding: one multiply and one add per choice in Acc, in the order j = 0..k-1).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

#include "common/input_errors.h"
#include "ops/moe/moe_unpermute/moe_unpermute.h"

namespace gpuprim {
namespace {

// Every slot is a row of expert_out, or -1 for a dropped choice (slots: contiguous int64 [tokens, k]).
void check_slots(InputOp op, const at::Tensor& slots, int64_t rows) {
  const int64_t* s = slots.const_data_ptr<int64_t>();
  for (int64_t pair = 0; pair < slots.numel(); ++pair) {
    if (s[pair] < -1 || s[pair] >= rows) {
      raise_input_error(op, InputArg::kSlots, InputRule::kOutOfRange, pair, s[pair], rows, 0, /*flattened=*/true);
    }
  }
}

template <typename T, typename Acc>
void combine_cpu(const T* expert_out, const int64_t* slots, const Acc* gates, int64_t tokens, int64_t k,
                 int64_t rows, int64_t hidden, T* out) {
  at::parallel_for(0, tokens, 16, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(hidden);
    for (int64_t t = begin; t < end; ++t) {
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t j = 0; j < k; ++j) {
        const int64_t s = slots[t * k + j];
        if (s < 0 || s >= rows) continue;  // dropped choice (or a bad slot): adds nothing
        const Acc w = gates ? gates[t * k + j] : Acc(1);
        const T* row = expert_out + s * hidden;
        for (int64_t c = 0; c < hidden; ++c) {
          const Acc product = w * static_cast<Acc>(row[c]);
          acc[c] = acc[c] + product;
        }
      }
      for (int64_t c = 0; c < hidden; ++c) out[t * hidden + c] = static_cast<T>(acc[c]);
    }
  });
}

template <typename T, typename Acc>
void backward_cpu(const T* grad, const T* expert_out, const int64_t* slots, const Acc* gates, int64_t tokens,
                  int64_t k, int64_t rows, int64_t hidden, T* grad_expert_out, Acc* grad_gates) {
  at::parallel_for(0, tokens * k, 16, [&](int64_t begin, int64_t end) {
    for (int64_t pair = begin; pair < end; ++pair) {
      const int64_t s = slots[pair], t = pair / k;
      if (s < 0 || s >= rows) {
        if (grad_gates) grad_gates[pair] = Acc(0);
        continue;
      }
      const Acc w = gates ? gates[pair] : Acc(1);
      const T* g = grad + t * hidden;
      T* to = grad_expert_out + s * hidden;
      for (int64_t c = 0; c < hidden; ++c) to[c] = static_cast<T>(w * static_cast<Acc>(g[c]));
      if (grad_gates) {
        const T* x = expert_out + s * hidden;
        Acc dot = 0;
        for (int64_t c = 0; c < hidden; ++c) dot += static_cast<Acc>(g[c]) * static_cast<Acc>(x[c]);
        grad_gates[pair] = dot;
      }
    }
  });
}

UnpermuteGrads moe_unpermute_backward_cpu(const at::Tensor& grad, const at::Tensor& expert_out,
                                          const at::Tensor& slots, const std::optional<at::Tensor>& gates,
                                          bool gates_grad) {
  moe_unpermute_backward_check(grad, expert_out, slots, gates, gates_grad);
  auto [grad_expert_out, grad_gates] = moe_unpermute_backward_outputs(expert_out, slots, gates_grad);
  grad_expert_out.zero_();  // rows no pair maps to (padding, dropped pairs) get no gradient
  const at::Tensor input = expert_out.contiguous(), slot_t = slots.contiguous(), grad_c = grad.contiguous();
  check_slots(InputOp::kMoeUnpermuteBackward, slot_t, input.size(0));
  const int64_t tokens = slots.size(0), k = slots.size(1), hidden = input.size(1);
  const at::Tensor w = moe_gates_in_acc(gates, input);
  if (tokens * k > 0) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_moe_unpermute_bw_cpu", [&] {
      using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
      backward_cpu<scalar_t, Acc>(grad_c.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>(),
                                  slot_t.const_data_ptr<int64_t>(), w.defined() ? w.const_data_ptr<Acc>() : nullptr,
                                  tokens, k, input.size(0), hidden, grad_expert_out.mutable_data_ptr<scalar_t>(),
                                  gates_grad ? grad_gates.mutable_data_ptr<Acc>() : nullptr);
    });
  }
  if (gates_grad) grad_gates = grad_gates.to(gates->scalar_type());
  return {grad_expert_out, grad_gates};
}

at::Tensor moe_unpermute_cpu(const at::Tensor& expert_out, const at::Tensor& slots,
                             const std::optional<at::Tensor>& gates) {
  moe_unpermute_check(expert_out, slots, gates);
  const at::Tensor input = expert_out.contiguous(), slot_t = slots.contiguous();
  check_slots(InputOp::kMoeUnpermute, slot_t, input.size(0));
  const int64_t tokens = slots.size(0), k = slots.size(1), hidden = input.size(1);
  at::Tensor out = at::empty({tokens, hidden}, input.options());
  if (out.numel() == 0) return out;
  const at::Tensor w = moe_gates_in_acc(gates, input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_moe_unpermute_cpu", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    combine_cpu<scalar_t, Acc>(input.const_data_ptr<scalar_t>(), slot_t.const_data_ptr<int64_t>(),
                               w.defined() ? w.const_data_ptr<Acc>() : nullptr, tokens, k, input.size(0), hidden,
                               out.mutable_data_ptr<scalar_t>());
  });
  return out;
}

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("moe_unpermute", &moe_unpermute_cpu); }
TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("moe_unpermute_backward", &moe_unpermute_backward_cpu); }

}  // namespace
}  // namespace gpuprim
