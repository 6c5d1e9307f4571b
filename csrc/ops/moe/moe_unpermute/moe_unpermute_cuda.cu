// Kernels of gpuprim::moe_unpermute and its backward, Acc = fp32 (fp64 for fp64 data), explicitly rounded
// products and sums in the order j = 0..k-1 (bitwise equal to the CPU kernel, and deterministic).
// Forward: one warp per token when there are many; for few tokens one thread per (token, 16-byte pack of
// columns) with up to 4 of the token's k rows loaded before they are summed, so that a small batch still keeps
// enough bytes in flight. expert_out is read once: streaming loads (evict-first).
// Backward: a pair index per row (inverse of slots), then one warp per row of grad_expert_out: it writes the
// row (zeros where no pair maps to it), so the output needs no separate zero fill.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "ops/moe/moe_unpermute/moe_unpermute_launch.h"
#include "prim/block/rows.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/warp/reduce.cuh"

namespace gpuprim {
namespace {

using moe::add_rn;
using moe::kWarpsPerBlock;
using moe::mul_rn;
using moe::Pack;

constexpr int kColumnUnroll = 4;  // backward: packs in flight per lane

// acc += gates[t, j] * expert_out[slots[t, j], column ..] for j = 0..k-1 in order (explicitly rounded), with
// InFlight rows' packs loaded before the first of them is added (bytes in flight hide the memory latency). The
// packs stay raw 16-byte words until added: converting them early would hold Vec floats per row in registers.
// Streaming loads (__ldcs): each row is read once, so it need not displace anything in L2.
template <typename Raw>
__device__ __forceinline__ Raw load_once(const Raw* p) {
  if constexpr (std::is_same_v<Raw, uint4>) {
    return __ldcs(p);
  } else {
    return *p;  // a pack narrower than 16 bytes (unaligned rows): plain load
  }
}

template <typename T, typename Acc, int Vec, int InFlight>
__device__ __forceinline__ void accumulate_rows(const T* __restrict__ expert_out, const int64_t* __restrict__ slots,
                                                const Acc* __restrict__ gates, const MoeUnpermuteShape& shape,
                                                int64_t t, int64_t column, Acc (&acc)[Vec]) {
  using Raw = std::conditional_t<sizeof(Pack<T, Vec>) == 16, uint4, Pack<T, Vec>>;
  for (int64_t j0 = 0; j0 < shape.k; j0 += InFlight) {
    Raw x[InFlight];
    bool valid[InFlight];
#pragma unroll
    for (int u = 0; u < InFlight; ++u) {
      const int64_t s = j0 + u < shape.k ? slots[t * shape.k + j0 + u] : -1;
      valid[u] = s >= 0 && s < shape.rows;  // dropped (or bad) slot: adds nothing
      if (!valid[u] && s != -1 && column == 0) record_input_error(shape.slots_check, t * shape.k + j0 + u, s);
      if (valid[u]) x[u] = load_once(reinterpret_cast<const Raw*>(expert_out + s * shape.hidden + column));
    }
#pragma unroll
    for (int u = 0; u < InFlight; ++u) {
      if (!valid[u]) continue;
      const Acc w = gates ? gates[t * shape.k + j0 + u] : Acc(1);
      Pack<T, Vec> p;
      memcpy(&p, &x[u], sizeof(p));
#pragma unroll
      for (int i = 0; i < Vec; ++i) acc[i] = add_rn(acc[i], mul_rn(w, convert<Acc>(p.items[i])));
    }
  }
}

// out[t, column .. column + Vec) = the fp32 sum of accumulate_rows, rounded once to T.
template <typename T, typename Acc, int Vec, int InFlight>
__device__ __forceinline__ void combine_pack(const T* __restrict__ expert_out, const int64_t* __restrict__ slots,
                                             const Acc* __restrict__ gates, const MoeUnpermuteShape& shape, int64_t t,
                                             int64_t column, T* __restrict__ out) {
  Acc acc[Vec];
#pragma unroll
  for (int i = 0; i < Vec; ++i) acc[i] = Acc(0);
  accumulate_rows<T, Acc, Vec, InFlight>(expert_out, slots, gates, shape, t, column, acc);
  Pack<T, Vec> y;
#pragma unroll
  for (int i = 0; i < Vec; ++i) y.items[i] = convert<T>(acc[i]);
  *reinterpret_cast<Pack<T, Vec>*>(out + t * shape.hidden + column) = y;
}

// Many tokens: one warp per token along 16-byte packs of its row, up to 4 of its k rows in flight (more bytes in
// flight than one row at a time).
template <typename T, typename Acc, int Vec, int InFlight>
__global__ void __launch_bounds__(kBlockThreads) combine_warp_kernel(const T* __restrict__ expert_out,
                                                                     const int64_t* __restrict__ slots,
                                                                     const Acc* __restrict__ gates,
                                                                     MoeUnpermuteShape shape, T* __restrict__ out) {
  const int lane = threadIdx.x % kWarpSize;
  for (int64_t t = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize; t < shape.tokens;
       t += int64_t(gridDim.x) * kWarpsPerBlock) {
    for (int64_t column = int64_t(lane) * Vec; column < shape.hidden; column += int64_t(kWarpSize) * Vec) {
      combine_pack<T, Acc, Vec, InFlight>(expert_out, slots, gates, shape, t, column, out);
    }
  }
}

// Few tokens (a warp per token leaves the GPU idle): one thread per (token, 16-byte pack).
// InFlight: rows loaded before they are summed (2 or 4, from k); 4 rows with 5 blocks per SM (48 registers) was
// the fastest of the measured variants (docs/experiments/moe.md).
constexpr int kThreadKernelBlocksPerSm = 5;
template <typename T, typename Acc, int Vec, int InFlight>
__global__ void __launch_bounds__(kBlockThreads, kThreadKernelBlocksPerSm)
    combine_kernel(const T* __restrict__ expert_out, const int64_t* __restrict__ slots, const Acc* __restrict__ gates,
                   MoeUnpermuteShape shape, T* __restrict__ out) {
  const int64_t packs = shape.hidden / Vec;
  const int64_t item = int64_t(blockIdx.x) * kBlockThreads + threadIdx.x;  // the grid covers every item
  if (item >= shape.tokens * packs) return;
  const int64_t t = item / packs, column = (item - t * packs) * Vec;
  combine_pack<T, Acc, Vec, InFlight>(expert_out, slots, gates, shape, t, column, out);
}

// pair_of_row[slots[p]] = p for every valid slot (the largest p if a malformed routing repeats a slot, so the
// result is still deterministic); grad_gates = 0 for every pair (the row kernel overwrites the mapped ones).
template <typename Acc>
__global__ void __launch_bounds__(kBlockThreads) invert_slots_kernel(const int64_t* __restrict__ slots,
                                                                     MoeUnpermuteShape shape,
                                                                     long long* __restrict__ pair_of_row,
                                                                     Acc* __restrict__ grad_gates) {
  const int64_t pairs = shape.tokens * shape.k;
  for (int64_t p = int64_t(blockIdx.x) * kBlockThreads + threadIdx.x; p < pairs;
       p += int64_t(gridDim.x) * kBlockThreads) {
    const int64_t s = slots[p];
    if (s >= 0 && s < shape.rows) {
      atomicMax(pair_of_row + s, (long long)p);
    } else if (s != -1) {
      record_input_error(shape.slots_check, p, s);
    }
    if (grad_gates) grad_gates[p] = Acc(0);
  }
}

template <typename T, typename Acc, int Vec>
__global__ void __launch_bounds__(kBlockThreads) backward_kernel(const T* __restrict__ grad,
                                                                 const T* __restrict__ expert_out,
                                                                 const long long* __restrict__ pair_of_row,
                                                                 const Acc* __restrict__ gates,
                                                                 MoeUnpermuteShape shape,
                                                                 T* __restrict__ grad_expert_out,
                                                                 Acc* __restrict__ grad_gates) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t packs = shape.hidden / Vec;
  for (int64_t r = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize; r < shape.rows;
       r += int64_t(gridDim.x) * kWarpsPerBlock) {
    const long long pair = pair_of_row[r];  // warp-uniform
    auto* to = reinterpret_cast<Pack<T, Vec>*>(grad_expert_out + r * shape.hidden);
    if (pair < 0) {  // padding row, or a dropped pair's: no gradient
      Pack<T, Vec> zero;
#pragma unroll
      for (int i = 0; i < Vec; ++i) zero.items[i] = convert<T>(Acc(0));
      for (int64_t c = lane; c < packs; c += kWarpSize) to[c] = zero;
      continue;
    }
    const int64_t t = pair / shape.k;
    const Acc w = gates ? gates[pair] : Acc(1);
    const auto* g_row = reinterpret_cast<const Pack<T, Vec>*>(grad + t * shape.hidden);
    const auto* x_row = reinterpret_cast<const Pack<T, Vec>*>(expert_out + r * shape.hidden);
    Acc dot = Acc(0);  // this lane's columns in increasing order, then a fixed warp tree
    for (int64_t c0 = lane; c0 < packs; c0 += int64_t(kWarpSize) * kColumnUnroll) {
      Pack<T, Vec> g[kColumnUnroll], x[kColumnUnroll];
#pragma unroll
      for (int u = 0; u < kColumnUnroll; ++u) {
        const int64_t c = c0 + int64_t(u) * kWarpSize;
        if (c < packs) {
          g[u] = g_row[c];
          if (grad_gates) x[u] = x_row[c];
        }
      }
#pragma unroll
      for (int u = 0; u < kColumnUnroll; ++u) {
        const int64_t c = c0 + int64_t(u) * kWarpSize;
        if (c >= packs) continue;
        Pack<T, Vec> y;
#pragma unroll
        for (int i = 0; i < Vec; ++i) y.items[i] = convert<T>(mul_rn(w, convert<Acc>(g[u].items[i])));
        to[c] = y;
        if (grad_gates) {
#pragma unroll
          for (int i = 0; i < Vec; ++i) {
            dot = add_rn(dot, mul_rn(convert<Acc>(g[u].items[i]), convert<Acc>(x[u].items[i])));
          }
        }
      }
    }
    if (grad_gates) {
      dot = warp::sum(dot);
      if (lane == 0) grad_gates[pair] = dot;
    }
  }
}

// Calls launch(vec, in_flight) (std::integral_constant<int, ...>) with combine's kernel configuration: full packs
// with 2 rows in flight for k <= 2, else 4; single elements (rows not 16-byte aligned) with 4.
template <int kVec, typename Launch>
void with_combine_config(int vec, int64_t k, Launch&& launch) {
  if (vec != kVec) return launch(std::integral_constant<int, 1>{}, std::integral_constant<int, 4>{});
  if (k <= 2) return launch(std::integral_constant<int, kVec>{}, std::integral_constant<int, 2>{});
  launch(std::integral_constant<int, kVec>{}, std::integral_constant<int, 4>{});
}

template <typename T>
void combine(const T* expert_out, const int64_t* slots, const void* gates, MoeUnpermuteShape shape, T* out,
             cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  constexpr int kVec = 16 / sizeof(T);
  const auto* w = static_cast<const Acc*>(gates);
  const int vec = moe::pack_width<T>(shape.hidden, expert_out, out);
  const DeviceInfo& device = current_device_info();
  // Warp per token once the warps fill the GPU's thread slots (>= ~2.7 waves of resident blocks); below that the
  // thread kernel wins (the crossover is measured in docs/experiments/moe.md).
  if (shape.tokens * kWarpSize >= int64_t(device.sm_count) * device.max_threads_per_sm) {
    const unsigned warps = moe::warp_grid(shape.tokens);
    // 4 rows in flight at most: 8 took ~120 registers here (2 blocks per SM), 4 takes ~70 (3 blocks).
    with_combine_config<kVec>(vec, shape.k, [&](auto pack, auto in_flight) {
      combine_warp_kernel<T, Acc, decltype(pack)::value, decltype(in_flight)::value>
          <<<warps, kBlockThreads, 0, stream>>>(expert_out, slots, w, shape, out);
    });
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  // One thread per item, no grid-stride loop: one item per 16 output bytes, so even an output filling the GPU's
  // memory needs < 2^25 blocks.
  const int64_t blocks = (shape.tokens * (shape.hidden / vec) + kBlockThreads - 1) / kBlockThreads;
  if (blocks > int64_t(INT_MAX)) throw std::invalid_argument("gpuprim.moe_unpermute: expert_out too wide");
  const unsigned grid = unsigned(blocks);
  with_combine_config<kVec>(vec, shape.k, [&](auto pack, auto in_flight) {
    combine_kernel<T, Acc, decltype(pack)::value, decltype(in_flight)::value>
        <<<grid, kBlockThreads, 0, stream>>>(expert_out, slots, w, shape, out);
  });
  GPUPRIM_LAUNCH_CHECK();
}

template <typename T>
void backward(const T* grad, const T* expert_out, const int64_t* slots, const void* gates, MoeUnpermuteShape shape,
              T* grad_expert_out, void* grad_gates, Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  constexpr int kVec = 16 / sizeof(T);
  const auto* w = static_cast<const Acc*>(gates);
  auto* gg = static_cast<Acc*>(grad_gates);
  auto* pair_of_row = static_cast<long long*>(workspace.allocate(sizeof(long long) * std::max<int64_t>(shape.rows, 1)));
  if (shape.rows > 0) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(pair_of_row, 0xff, sizeof(long long) * shape.rows, stream));  // -1
  }
  if (shape.tokens * shape.k > 0) {
    const unsigned pairs_grid = grid_for(shape.tokens * shape.k, kBlockThreads, moe::kMaxBlocks);
    invert_slots_kernel<Acc><<<pairs_grid, kBlockThreads, 0, stream>>>(slots, shape, pair_of_row, gg);
    GPUPRIM_LAUNCH_CHECK();
  }
  if (shape.rows == 0) return;
  const unsigned grid = moe::warp_grid(shape.rows);
  if (moe::pack_width<T>(shape.hidden, grad, expert_out, grad_expert_out) == kVec) {
    backward_kernel<T, Acc, kVec><<<grid, kBlockThreads, 0, stream>>>(grad, expert_out, pair_of_row, w, shape,
                                                                      grad_expert_out, gg);
  } else {
    backward_kernel<T, Acc, 1><<<grid, kBlockThreads, 0, stream>>>(grad, expert_out, pair_of_row, w, shape,
                                                                   grad_expert_out, gg);
  }
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void moe_unpermute_cuda_launch(const void* expert_out, DType type, const int64_t* slots, const void* gates,
                               MoeUnpermuteShape shape, void* out, cudaStream_t stream) {
  if (shape.tokens == 0 || shape.hidden == 0) return;
  dispatch<FloatingTypes>("moe_unpermute", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    combine<T>(static_cast<const T*>(expert_out), slots, gates, shape, static_cast<T*>(out), stream);
  });
}

void moe_unpermute_backward_cuda_launch(const void* grad, const void* expert_out, DType type, const int64_t* slots,
                                        const void* gates, MoeUnpermuteShape shape, void* grad_expert_out,
                                        void* grad_gates, Workspace& workspace, cudaStream_t stream) {
  if (shape.hidden == 0) return;  // nothing to write (the glue zeroes grad_gates)
  dispatch<FloatingTypes>("moe_unpermute_backward", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    backward<T>(static_cast<const T*>(grad), static_cast<const T*>(expert_out), slots, gates, shape,
                static_cast<T*>(grad_expert_out), grad_gates, workspace, stream);
  });
}

}  // namespace gpuprim
