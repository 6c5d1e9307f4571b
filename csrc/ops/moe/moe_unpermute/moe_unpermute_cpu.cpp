// CPU kernels of gpuprim::moe_unpermute and its backward: the readable reference for the CUDA kernels
// (same rounding: one multiply and one add per choice in Acc, in the order j = 0..k-1).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "common/torch_utils.h"
#include "ops/moe/moe_unpermute/moe_unpermute.h"

namespace gpuprim {

void moe_unpermute_check(const at::Tensor& expert_out, const at::Tensor& slots,
                         const std::optional<at::Tensor>& gates) {
  constexpr const char* op = "moe_unpermute";
  const auto type = expert_out.scalar_type();
  GPUPRIM_CHECK_DTYPE(type == at::kHalf || type == at::kBFloat16 || type == at::kFloat || type == at::kDouble, op,
                      "expert_out", "a float16, bfloat16, float32 or float64 tensor", type);
  GPUPRIM_CHECK_ARG(expert_out.dim() == 2, op, "expert_out", "2-D [rows, hidden_size]",
                    std::to_string(expert_out.dim()) + "-D tensor");
  check_same_device(op, expert_out, "slots", slots);
  GPUPRIM_CHECK_ARG(slots.dim() == 2, op, "slots", "2-D [tokens, k]", std::to_string(slots.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(slots.scalar_type() == at::kLong, op, "slots", "an int64 tensor", slots.scalar_type());
  if (gates.has_value()) {
    check_same_device(op, expert_out, "gates", *gates);
    GPUPRIM_CHECK_DTYPE(at::isFloatingType(gates->scalar_type()), op, "gates", "a floating-point tensor",
                        gates->scalar_type());
    GPUPRIM_CHECK_ARG(gates->sym_sizes().equals(slots.sym_sizes()), op, "gates",
                      c10::str("of routing.slots' shape ", slots.sym_sizes()), gates->sym_sizes());
  }
}

void moe_unpermute_backward_check(const at::Tensor& grad, const at::Tensor& expert_out, const at::Tensor& slots,
                                  const std::optional<at::Tensor>& gates, bool gates_grad) {
  moe_unpermute_check(expert_out, slots, gates);
  check_same_device("moe_unpermute_backward", expert_out, "grad", grad);
  GPUPRIM_CHECK_ARG(grad.dim() == 2 && grad.sym_size(0) == slots.sym_size(0) &&
                        grad.sym_size(1) == expert_out.sym_size(1),
                    "moe_unpermute_backward", "grad", "of the forward output's shape [tokens, hidden_size]",
                    grad.sym_sizes());
  GPUPRIM_CHECK_DTYPE(grad.scalar_type() == expert_out.scalar_type(), "moe_unpermute_backward", "grad",
                      c10::str("of expert_out's dtype ", expert_out.scalar_type()), grad.scalar_type());
  GPUPRIM_CHECK_ARG(!gates_grad || gates.has_value(), "moe_unpermute_backward", "gates_grad",
                    "False when gates is None", gates_grad);
}

namespace {

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

at::Tensor moe_unpermute_cpu(const at::Tensor& expert_out, const at::Tensor& slots,
                             const std::optional<at::Tensor>& gates) {
  moe_unpermute_check(expert_out, slots, gates);
  const at::Tensor input = expert_out.contiguous(), slot_t = slots.contiguous();
  const int64_t tokens = slots.size(0), k = slots.size(1), hidden = input.size(1);
  at::Tensor out = at::empty({tokens, hidden}, input.options());
  if (out.numel() == 0) return out;
  const at::Tensor w = gates.has_value() ? gates->to(moe_acc_type(input)).contiguous() : at::Tensor();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gpuprim_moe_unpermute_cpu", [&] {
    using Acc = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    combine_cpu<scalar_t, Acc>(input.const_data_ptr<scalar_t>(), slot_t.const_data_ptr<int64_t>(),
                               w.defined() ? w.const_data_ptr<Acc>() : nullptr, tokens, k, input.size(0), hidden,
                               out.mutable_data_ptr<scalar_t>());
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> moe_unpermute_backward_cpu(const at::Tensor& grad, const at::Tensor& expert_out,
                                                              const at::Tensor& slots,
                                                              const std::optional<at::Tensor>& gates,
                                                              bool gates_grad) {
  moe_unpermute_backward_check(grad, expert_out, slots, gates, gates_grad);
  const at::Tensor input = expert_out.contiguous(), slot_t = slots.contiguous(), grad_c = grad.contiguous();
  const int64_t tokens = slots.size(0), k = slots.size(1), hidden = input.size(1);
  const auto acc_type = moe_acc_type(input);
  at::Tensor grad_expert_out = at::zeros(input.sizes(), input.options());
  at::Tensor grad_gates = gates_grad ? at::zeros({tokens, k}, input.options().dtype(acc_type))
                                     : at::zeros({0}, input.options().dtype(acc_type));
  const at::Tensor w = gates.has_value() ? gates->to(acc_type).contiguous() : at::Tensor();
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

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) {
  m.impl("moe_unpermute", &moe_unpermute_cpu);
  m.impl("moe_unpermute_backward", &moe_unpermute_backward_cpu);
}

}  // namespace gpuprim
