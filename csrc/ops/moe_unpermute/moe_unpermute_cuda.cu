// Kernels of gpuprim::moe_unpermute and its backward: one warp per token (forward) or per (token, choice)
// pair (backward), 16-byte packs along the row, Acc = fp32 (fp64 for fp64 data), explicitly rounded products
// and sums in the order j = 0..k-1 (bitwise equal to the CPU kernel, and deterministic).
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.h"
#include "ops/moe_unpermute/moe_unpermute_launch.h"
#include "prim/moe_rows.cuh"

namespace gpuprim {
namespace {

using moe::add_rn;
using moe::kBlockThreads;
using moe::kWarp;
using moe::kWarpsPerBlock;
using moe::mul_rn;
using moe::Pack;

template <typename T, typename Acc, int Vec>
__global__ void __launch_bounds__(kBlockThreads) combine_kernel(const T* __restrict__ expert_out,
                                                                const int64_t* __restrict__ slots,
                                                                const Acc* __restrict__ gates,
                                                                MoeUnpermuteShape shape, T* __restrict__ out) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t t = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; t < shape.tokens;
       t += int64_t(gridDim.x) * kWarpsPerBlock) {
    for (int64_t column = int64_t(lane) * Vec; column < shape.hidden; column += int64_t(kWarp) * Vec) {
      Acc acc[Vec];
#pragma unroll
      for (int i = 0; i < Vec; ++i) acc[i] = Acc(0);
      for (int64_t j = 0; j < shape.k; ++j) {
        const int64_t s = slots[t * shape.k + j];
        if (s < 0 || s >= shape.rows) continue;  // dropped (or bad) slot: adds nothing
        const Acc w = gates ? gates[t * shape.k + j] : Acc(1);
        const Pack<T, Vec> x = *reinterpret_cast<const Pack<T, Vec>*>(expert_out + s * shape.hidden + column);
#pragma unroll
        for (int i = 0; i < Vec; ++i) acc[i] = add_rn(acc[i], mul_rn(w, convert<Acc>(x.items[i])));
      }
      Pack<T, Vec> y;
#pragma unroll
      for (int i = 0; i < Vec; ++i) y.items[i] = convert<T>(acc[i]);
      *reinterpret_cast<Pack<T, Vec>*>(out + t * shape.hidden + column) = y;
    }
  }
}

template <typename T, typename Acc, int Vec>
__global__ void __launch_bounds__(kBlockThreads) backward_kernel(const T* __restrict__ grad,
                                                                 const T* __restrict__ expert_out,
                                                                 const int64_t* __restrict__ slots,
                                                                 const Acc* __restrict__ gates,
                                                                 MoeUnpermuteShape shape,
                                                                 T* __restrict__ grad_expert_out,
                                                                 Acc* __restrict__ grad_gates) {
  const int lane = threadIdx.x % kWarp;
  const int64_t pairs = shape.tokens * shape.k;
  for (int64_t pair = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; pair < pairs;
       pair += int64_t(gridDim.x) * kWarpsPerBlock) {
    const int64_t s = slots[pair], t = pair / shape.k;
    Acc dot = Acc(0);
    if (s >= 0 && s < shape.rows) {  // warp-uniform
      const Acc w = gates ? gates[pair] : Acc(1);
      for (int64_t column = int64_t(lane) * Vec; column < shape.hidden; column += int64_t(kWarp) * Vec) {
        const Pack<T, Vec> g = *reinterpret_cast<const Pack<T, Vec>*>(grad + t * shape.hidden + column);
        Pack<T, Vec> y;
#pragma unroll
        for (int i = 0; i < Vec; ++i) y.items[i] = convert<T>(mul_rn(w, convert<Acc>(g.items[i])));
        *reinterpret_cast<Pack<T, Vec>*>(grad_expert_out + s * shape.hidden + column) = y;
        if (grad_gates) {
          const Pack<T, Vec> x = *reinterpret_cast<const Pack<T, Vec>*>(expert_out + s * shape.hidden + column);
#pragma unroll
          for (int i = 0; i < Vec; ++i) dot = add_rn(dot, mul_rn(convert<Acc>(g.items[i]), convert<Acc>(x.items[i])));
        }
      }
    }
    if (grad_gates) {
      dot = moe::warp_sum(dot);
      if (lane == 0) grad_gates[pair] = dot;
    }
  }
}

template <typename T>
void combine(const T* expert_out, const int64_t* slots, const void* gates, MoeUnpermuteShape shape, T* out,
             cudaStream_t stream) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int kVec = 16 / sizeof(T);
  const auto* w = static_cast<const Acc*>(gates);
  const unsigned grid = moe::warp_grid(shape.tokens);
  if (moe::pack_width<T>(shape.hidden, expert_out, out) == kVec) {
    combine_kernel<T, Acc, kVec><<<grid, kBlockThreads, 0, stream>>>(expert_out, slots, w, shape, out);
  } else {
    combine_kernel<T, Acc, 1><<<grid, kBlockThreads, 0, stream>>>(expert_out, slots, w, shape, out);
  }
  GPUPRIM_LAUNCH_CHECK();
}

template <typename T>
void backward(const T* grad, const T* expert_out, const int64_t* slots, const void* gates, MoeUnpermuteShape shape,
              T* grad_expert_out, void* grad_gates, cudaStream_t stream) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int kVec = 16 / sizeof(T);
  const auto* w = static_cast<const Acc*>(gates);
  auto* gg = static_cast<Acc*>(grad_gates);
  const unsigned grid = moe::warp_grid(shape.tokens * shape.k);
  if (moe::pack_width<T>(shape.hidden, grad, expert_out, grad_expert_out) == kVec) {
    backward_kernel<T, Acc, kVec><<<grid, kBlockThreads, 0, stream>>>(grad, expert_out, slots, w, shape,
                                                                      grad_expert_out, gg);
  } else {
    backward_kernel<T, Acc, 1><<<grid, kBlockThreads, 0, stream>>>(grad, expert_out, slots, w, shape,
                                                                   grad_expert_out, gg);
  }
  GPUPRIM_LAUNCH_CHECK();
}

template <typename F>
void dispatch_float(const char* op, DType type, F&& body) {
  switch (type) {
    case DType::kFloat16: return body(__half());
    case DType::kBFloat16: return body(__nv_bfloat16());
    case DType::kFloat32: return body(float());
    case DType::kFloat64: return body(double());
    default: unsupported_dtype(op, type);
  }
}

}  // namespace

void moe_unpermute_cuda_launch(const void* expert_out, DType type, const int64_t* slots, const void* gates,
                               MoeUnpermuteShape shape, void* out, cudaStream_t stream) {
  if (shape.tokens == 0 || shape.hidden == 0) return;
  dispatch_float("moe_unpermute", type, [&](auto tag) {
    using T = decltype(tag);
    combine<T>(static_cast<const T*>(expert_out), slots, gates, shape, static_cast<T*>(out), stream);
  });
}

void moe_unpermute_backward_cuda_launch(const void* grad, const void* expert_out, DType type, const int64_t* slots,
                                        const void* gates, MoeUnpermuteShape shape, void* grad_expert_out,
                                        void* grad_gates, cudaStream_t stream) {
  if (shape.tokens * shape.k == 0 || shape.hidden == 0) return;
  dispatch_float("moe_unpermute_backward", type, [&](auto tag) {
    using T = decltype(tag);
    backward<T>(static_cast<const T*>(grad), static_cast<const T*>(expert_out), slots, gates, shape,
                static_cast<T*>(grad_expert_out), grad_gates, stream);
  });
}

}  // namespace gpuprim
