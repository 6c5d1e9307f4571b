// Kernels of the exact sum (launched by exact_sum.cuh): the arithmetic of exact_sum.h, shared with the CPU
// kernel, spread over warps.
//
//   sum_chunks_kernel   a warp per (row, chunk) work item, grid-stride over items: 16-byte vector loads,
//                       one Accumulator per lane, warp merge (exact integer adds). A row in one chunk is
//                       finished (rounded and stored) right there; otherwise the warp writes its canonical
//                       partial state to the workspace.
//   sum_combine_kernel  a block per row: merges that row's chunk partials in 128-bit integers, rounds once.
//   sum_columns_kernel  [outer, n, inner] reduced over n (a non-last dim): a thread per column (o, i) and
//                       chunk of n, loads coalesced across i; sum_columns_combine_kernel merges chunks.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "prim/device/exact_sum/exact_sum.h"
#include "prim/device/exact_sum/tuning_exact_sum.h"
#include "prim/util/dtype.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace exact_sum {

// Blocks of up to 1024 threads (the test knob's largest).
constexpr int kMaxThreads = 1024;
// Values per work item at most: keeps a warp's int64 counts far from overflow.
constexpr int64_t kMaxChunk = int64_t(1) << 30;

template <typename In> __device__ __forceinline__ double load_value(In v) { return static_cast<double>(v); }
template <> __device__ __forceinline__ double load_value<__half>(__half v) { return double(__half2float(v)); }
template <> __device__ __forceinline__ double load_value<__nv_bfloat16>(__nv_bfloat16 v) {
  return double(__bfloat162float(v));
}

template <typename In>
struct alignas(16) Vector {
  static constexpr int kItems = int(16 / sizeof(In));
  In items[kItems];
};

// Rounds the row's state once (sum) or divides the fp64-rounded sum by cols (mean), then stores it:
// `value` is exactly representable in out_type, so the conversions below are exact.
template <int K>
__device__ void finish_row(const WideState<K>& state, bool mean, int64_t cols, DType out_type, void* out,
                           int64_t row) {
  const double value = finish_value(state, mean, cols, format_of(out_type));
  const bool nan = value != value;  // stored with the same bits as the CPU kernel
  switch (out_type) {
    case DType::kFloat16:
      static_cast<__half*>(out)[row] = nan ? __ushort_as_half(kNaNBitsFloat16) : __double2half(value);
      break;
    case DType::kBFloat16:
      static_cast<__nv_bfloat16*>(out)[row] = nan ? __ushort_as_bfloat16(kNaNBitsBFloat16) : __double2bfloat16(value);
      break;
    case DType::kFloat32:
      static_cast<float*>(out)[row] = nan ? __uint_as_float(kNaNBitsFloat32) : static_cast<float>(value);
      break;
    default: static_cast<double*>(out)[row] = nan ? canonical_nan() : value; break;
  }
}

// A count's value on lane `lane ^ offset` (int64 or 128-bit).
__device__ __forceinline__ int64_t shfl_xor(int64_t c, int offset) {
  return __shfl_xor_sync(kFullMask, static_cast<long long>(c), offset);
}
__device__ __forceinline__ __int128 shfl_xor(__int128 c, int offset) {
  const unsigned long long lo = __shfl_xor_sync(kFullMask, static_cast<unsigned long long>(c), offset);
  const unsigned long long hi =
      __shfl_xor_sync(kFullMask, static_cast<unsigned long long>(static_cast<unsigned __int128>(c) >> 64), offset);
  return static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
}

// Exact warp-wide merge of a State or WideState; every lane returns the merged state.
template <template <int> class StateOf, int K>
__device__ __forceinline__ StateOf<K> warp_merge(StateOf<K> s) {
  int top = s.top;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) top = max(top, __shfl_xor_sync(kFullMask, top, offset));
  shift_bins<K>(s.count, top - s.top);
  s.top = top;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    auto c = s.count[k];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) c += shfl_xor(c, offset);
    s.count[k] = c;
  }
  s.flags = __reduce_or_sync(kFullMask, s.flags);
  return s;
}

// Groups of at most Tuning::kGroupValues values.
template <typename In, int K>
__device__ __forceinline__ void add_vector(Accumulator<K>& acc, const Vector<In>& v) {
  constexpr int kItems = Vector<In>::kItems;
  constexpr int kGroup = kItems < Tuning::kGroupValues ? kItems : Tuning::kGroupValues;
#pragma unroll
  for (int first = 0; first < kItems; first += kGroup) {
    double values[kGroup];
#pragma unroll
    for (int j = 0; j < kGroup; ++j) values[j] = load_value(v.items[first + j]);
    acc.add_values(values);
  }
}

template <typename In, int K>
__global__ void __launch_bounds__(kMaxThreads) sum_chunks_kernel(const In* __restrict__ x, int64_t rows, int64_t cols,
                                                          int64_t chunk_len, int64_t chunks_per_row,
                                                          State<K>* __restrict__ partials, bool mean,
                                                          DType out_type, void* __restrict__ out) {
  constexpr int kItems = Vector<In>::kItems;
  const int lane = int(threadIdx.x % kWarpSize);
  const int64_t warps_per_block = blockDim.x / kWarpSize;
  const int64_t warps_total = int64_t(gridDim.x) * warps_per_block;
  const int64_t items = rows * chunks_per_row;
  // Warp-uniform loop: every lane of a warp works on the same item, so the shuffles below are safe.
  for (int64_t item = int64_t(blockIdx.x) * warps_per_block + threadIdx.x / kWarpSize; item < items;
       item += warps_total) {
    const int64_t row = item / chunks_per_row;
    const int64_t chunk = item - row * chunks_per_row;
    const int64_t begin = row * cols + std::min(cols, chunk * chunk_len);
    const int64_t end = row * cols + std::min(cols, (chunk + 1) * chunk_len);
    Accumulator<K> acc;
    acc.init();
    // Head: the values before the first 16-byte boundary (x itself is aligned to sizeof(In)).
    const int64_t misalign = int64_t((reinterpret_cast<uintptr_t>(x + begin) / sizeof(In)) % kItems);
    const int64_t head = std::min<int64_t>(misalign == 0 ? 0 : kItems - misalign, end - begin);
    if (lane < head) acc.add(load_value(x[begin + lane]));
    const int64_t body = begin + head;
    const int64_t vectors = (end - body) / kItems;
    const Vector<In>* vec = reinterpret_cast<const Vector<In>*>(x + body);
    int64_t v = lane;
    for (; v + kWarpSize < vectors; v += 2 * kWarpSize) {  // two 16-byte loads in flight per lane
      const Vector<In> a = vec[v];
      const Vector<In> b = vec[v + kWarpSize];
      add_vector<In, K>(acc, a);
      add_vector<In, K>(acc, b);
    }
    if (v < vectors) add_vector<In, K>(acc, vec[v]);
    // Tail: fewer than kItems values after the last whole vector.
    const int64_t tail = body + vectors * kItems;
    if (lane < end - tail) acc.add(load_value(x[tail + lane]));
    const State<K> state = warp_merge(acc.state());
    if (lane == 0) {
      if (chunks_per_row == 1) {
        finish_row<K>(widen(state), mean, cols, out_type, out, row);
      } else {
        partials[item] = state;
      }
    }
  }
}

// A block per row (block-uniform loop, so the barriers are safe): threads merge the row's chunk
// partials in 128-bit integers, then warps, then the warps' states through shared memory.
template <int K>
__global__ void __launch_bounds__(kMaxThreads) sum_combine_kernel(const State<K>* __restrict__ partials, int64_t rows,
                                                           int64_t chunks_per_row, int64_t cols, bool mean,
                                                           DType out_type, void* __restrict__ out) {
  __shared__ WideState<K> warp_states[kMaxThreads / kWarpSize];
  const int lane = int(threadIdx.x % kWarpSize), warp = int(threadIdx.x / kWarpSize);
  const int warps = int(blockDim.x / kWarpSize);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const State<K>* row_partials = partials + row * chunks_per_row;
    WideState<K> state = widen(empty_state<K>());
    for (int64_t c = threadIdx.x; c < chunks_per_row; c += blockDim.x) merge(state, widen(row_partials[c]));
    state = warp_merge(state);
    if (lane == 0) warp_states[warp] = state;
    __syncthreads();
    if (warp == 0) {
      WideState<K> total = lane < warps ? warp_states[lane] : widen(empty_state<K>());
      total = warp_merge(total);
      if (lane == 0) finish_row<K>(total, mean, cols, out_type, out, row);
    }
    __syncthreads();  // warp_states is reused for the next row
  }
}

// [outer, n, inner] with the n dim reduced: a thread per (column, chunk of n), column = (o, i), so a
// warp's loads are consecutive in i (coalesced). Chunks of n only when columns alone cannot fill the GPU;
// then partials are [chunk][column] and sum_columns_combine_kernel merges them, a thread per column.
template <typename In, int K>
__global__ void __launch_bounds__(kMaxThreads) sum_columns_kernel(const In* __restrict__ x, int64_t outer, int64_t n,
                                                           int64_t inner, int64_t chunk_len, int64_t chunks,
                                                           State<K>* __restrict__ partials, bool mean,
                                                           DType out_type, void* __restrict__ out) {
  const int64_t columns = outer * inner;
  const int64_t items = columns * chunks;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; item < items; item += stride) {
    const int64_t chunk = item / columns;
    const int64_t column = item - chunk * columns;
    const int64_t o = column / inner, i = column - o * inner;
    const int64_t first = std::min(n, chunk * chunk_len), last = std::min(n, (chunk + 1) * chunk_len);
    const In* p = x + o * n * inner + i;
    Accumulator<K> acc;
    acc.init();
    int64_t j = first;
    constexpr int kUnroll = Tuning::kColumnUnroll;
    for (; j + kUnroll <= last; j += kUnroll) {  // kUnroll independent loads in flight
      double values[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) values[u] = load_value(p[(j + u) * inner]);
      acc.add_values(values);
    }
    for (; j < last; ++j) acc.add(load_value(p[j * inner]));
    const State<K> state = acc.state();
    if (chunks == 1) {
      finish_row<K>(widen(state), mean, n, out_type, out, column);
    } else {
      partials[item] = state;
    }
  }
}

template <int K>
__global__ void __launch_bounds__(kMaxThreads) sum_columns_combine_kernel(const State<K>* __restrict__ partials,
                                                                   int64_t columns, int64_t chunks, int64_t n,
                                                                   bool mean, DType out_type,
                                                                   void* __restrict__ out) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t column = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; column < columns; column += stride) {
    WideState<K> state = widen(empty_state<K>());
    for (int64_t chunk = 0; chunk < chunks; ++chunk) merge(state, widen(partials[chunk * columns + column]));
    finish_row<K>(state, mean, n, out_type, out, column);
  }
}

}  // namespace exact_sum
}  // namespace gpuprim
