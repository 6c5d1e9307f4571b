// CUDA kernels of gpuprim::sum and gpuprim::mean: the arithmetic of prim/exact_sum.h (shared with the
// CPU kernel), spread over warps.
//
//   sum_chunks_kernel   a warp per (row, chunk) work item, grid-stride over items: 16-byte vector loads,
//                       one exact_sum::Accumulator per lane, warp merge (exact integer adds). A row in one
//                       chunk is finished (rounded and stored) right there; otherwise the warp writes its
//                       canonical partial state to the workspace.
//   sum_combine_kernel  a block per row: merges that row's chunk partials in 128-bit integers, rounds once.
//   sum_columns_kernel  [outer, n, inner] reduced over n (a non-last dim): a thread per column (o, i) and
//                       chunk of n, loads coalesced across i; sum_columns_combine_kernel merges chunks.
// Chunk sizes follow the device (SM count, occupancy) and the test knob; the result never does, since
// partial states merge exactly.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "ops/reduce/sum/sum_launch.h"
#include "prim/device/exact_sum/exact_sum.h"
#include "prim/util/convert.cuh"

namespace gpuprim {
namespace {

using namespace exact_sum;

constexpr int kDefaultThreads = 256;
// Values per work item when rows are split: at least 8 16-byte vectors per lane (amortizes the warp's
// merge and partial, and keeps rows of up to 1024 fp32 in one launch: small inputs are latency-bound),
// at most what the grid needs to cover the row once. With the test knob, single vectors, so that
// small inputs split too.
constexpr int64_t kMinVectorsPerLane = 8;
constexpr int64_t kMaxChunk = int64_t(1) << 30;  // keeps a warp's int64 counts far from overflow
constexpr unsigned kFullMask = 0xffffffffu;

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

__device__ Format format_of(DType type) {
  switch (type) {
    case DType::kFloat16: return float16_format();
    case DType::kBFloat16: return bfloat16_format();
    case DType::kFloat32: return float32_format();
    default: return float64_format();
  }
}

// Rounds the row's state once (sum) or divides the fp64-rounded sum by cols (mean), then stores it:
// `value` is exactly representable in out_type, so the conversions below are exact.
template <int K>
__device__ void finish_row(const WideState<K>& state, bool mean, int64_t cols, DType out_type, void* out,
                           int64_t row) {
  const Format format = format_of(out_type);
  double value = finish(state, mean ? float64_format() : format);
  if (mean) value = round_double_to_format(__ddiv_rn(value, static_cast<double>(cols)), format);
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

// Exact warp-wide merge; every lane returns the merged state.
template <int K>
__device__ __forceinline__ State<K> warp_merge(State<K> s) {
  int top = s.top;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) top = max(top, __shfl_xor_sync(kFullMask, top, offset));
  shift_bins<K>(s.count, top - s.top);
  s.top = top;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    long long c = s.count[k];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) c += __shfl_xor_sync(kFullMask, c, offset);
    s.count[k] = c;
  }
  s.flags = __reduce_or_sync(kFullMask, s.flags);
  return s;
}

template <int K>
__device__ __forceinline__ WideState<K> warp_merge(WideState<K> s) {
  int top = s.top;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) top = max(top, __shfl_xor_sync(kFullMask, top, offset));
  shift_bins<K>(s.count, top - s.top);
  s.top = top;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    __int128 c = s.count[k];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      const unsigned long long lo = __shfl_xor_sync(kFullMask, static_cast<unsigned long long>(c), offset);
      const unsigned long long hi =
          __shfl_xor_sync(kFullMask, static_cast<unsigned long long>(static_cast<unsigned __int128>(c) >> 64), offset);
      c += static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
    }
    s.count[k] = c;
  }
  s.flags = __reduce_or_sync(kFullMask, s.flags);
  return s;
}

// Groups of at most 4 values (8 for 16-bit types would need 16 more registers per vector and spill).
template <typename In, int K>
__device__ __forceinline__ void add_vector(Accumulator<K>& acc, const Vector<In>& v) {
  constexpr int kItems = Vector<In>::kItems;
  constexpr int kGroup = kItems < 4 ? kItems : 4;
#pragma unroll
  for (int first = 0; first < kItems; first += kGroup) {
    double values[kGroup];
#pragma unroll
    for (int j = 0; j < kGroup; ++j) values[j] = load_value(v.items[first + j]);
    acc.add_values(values);
  }
}

template <typename In, int K>
__global__ void __launch_bounds__(1024) sum_chunks_kernel(const In* __restrict__ x, int64_t rows, int64_t cols,
                                                          int64_t chunk_len, int64_t chunks_per_row,
                                                          State<K>* __restrict__ partials, bool mean,
                                                          DType out_type, void* __restrict__ out) {
  constexpr int kItems = Vector<In>::kItems;
  const int lane = int(threadIdx.x % 32);
  const int64_t warps_per_block = blockDim.x / 32;
  const int64_t warps_total = int64_t(gridDim.x) * warps_per_block;
  const int64_t items = rows * chunks_per_row;
  // Warp-uniform loop: every lane of a warp works on the same item, so the shuffles below are safe.
  for (int64_t item = int64_t(blockIdx.x) * warps_per_block + threadIdx.x / 32; item < items; item += warps_total) {
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
    for (; v + 32 < vectors; v += 64) {  // two 16-byte loads in flight per lane
      const Vector<In> a = vec[v];
      const Vector<In> b = vec[v + 32];
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
__global__ void __launch_bounds__(1024) sum_combine_kernel(const State<K>* __restrict__ partials, int64_t rows,
                                                           int64_t chunks_per_row, int64_t cols, bool mean,
                                                           DType out_type, void* __restrict__ out) {
  __shared__ WideState<K> warp_states[32];
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32), warps = int(blockDim.x / 32);
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
__global__ void __launch_bounds__(1024) sum_columns_kernel(const In* __restrict__ x, int64_t outer, int64_t n,
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
    for (; j + 4 <= last; j += 4) {  // four independent loads in flight
      double values[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) values[u] = load_value(p[(j + u) * inner]);
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
__global__ void __launch_bounds__(1024) sum_columns_combine_kernel(const State<K>* __restrict__ partials,
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

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename In>
void sum_rows(const In* x, int64_t rows, int64_t cols, bool mean, DType out_type, void* out, int64_t blocks,
              int64_t threads, Workspace& workspace, cudaStream_t stream) {
  constexpr int K = BinsFor<std::conditional_t<std::is_same_v<In, double>, double, float>>::value;
  constexpr int64_t kItems = Vector<In>::kItems;
  const bool knob = blocks > 0;
  if (threads <= 0) threads = kDefaultThreads;
  const int64_t warps_per_block = threads / 32;
  auto kernel = sum_chunks_kernel<In, K>;
  const DeviceInfo& info = current_device_info();
  // Occupancy of the default block size is asked once (it costs microseconds: small inputs notice).
  static std::atomic<int> default_per_sm{0};
  int per_sm = threads == kDefaultThreads ? default_per_sm.load() : 0;
  if (per_sm == 0) {
    GPUPRIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(threads), 0));
    if (threads == kDefaultThreads) default_per_sm = per_sm;
  }
  const int64_t resident_blocks = int64_t(std::max(per_sm, 1)) * info.sm_count;
  const int64_t target_warps = (knob ? blocks : resident_blocks) * warps_per_block;
  // Split rows into chunks only while there are fewer rows than warps to fill the GPU.
  int64_t chunks = 1;
  if (rows < target_warps) {
    const int64_t min_chunk = 32 * kItems * (knob ? 1 : kMinVectorsPerLane);
    chunks = std::min(ceil_div(target_warps, rows), ceil_div(cols, min_chunk));
  }
  chunks = std::max<int64_t>({chunks, ceil_div(cols, kMaxChunk), 1});
  int64_t chunk_len = ceil_div(cols, chunks);
  chunk_len = ceil_div(chunk_len, 32 * kItems) * (32 * kItems);  // whole warp-wide vector steps
  chunks = cols == 0 ? 1 : ceil_div(cols, chunk_len);
  const int64_t items = rows * chunks;
  const int64_t grid = knob ? blocks : std::min(ceil_div(items, warps_per_block), resident_blocks);
  State<K>* partials =
      chunks > 1 ? static_cast<State<K>*>(workspace.allocate(size_t(items) * sizeof(State<K>))) : nullptr;
  kernel<<<unsigned(grid), unsigned(threads), 0, stream>>>(x, rows, cols, chunk_len, chunks, partials, mean, out_type,
                                                          out);
  GPUPRIM_LAUNCH_CHECK();
  if (chunks > 1) {
    const int64_t combine_grid = std::min(rows, resident_blocks);
    sum_combine_kernel<K><<<unsigned(combine_grid), unsigned(threads), 0, stream>>>(partials, rows, chunks, cols, mean,
                                                                                  out_type, out);
    GPUPRIM_LAUNCH_CHECK();
  }
}

template <typename In>
void sum_columns(const In* x, int64_t outer, int64_t n, int64_t inner, bool mean, DType out_type, void* out,
                 int64_t blocks, int64_t threads, Workspace& workspace, cudaStream_t stream) {
  constexpr int K = BinsFor<std::conditional_t<std::is_same_v<In, double>, double, float>>::value;
  const bool knob = blocks > 0;
  if (threads <= 0) threads = kDefaultThreads;
  auto kernel = sum_columns_kernel<In, K>;
  const DeviceInfo& info = current_device_info();
  int per_sm = 0;
  GPUPRIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(threads), 0));
  const int64_t resident_blocks = int64_t(std::max(per_sm, 1)) * info.sm_count;
  const int64_t target_threads = (knob ? blocks : resident_blocks) * threads;
  const int64_t columns = outer * inner;
  // Split n only while columns cannot fill the GPU; at least 16 values per thread (4 with the knob).
  int64_t chunks = 1;
  if (columns < target_threads) chunks = std::min(ceil_div(target_threads, columns), ceil_div(n, knob ? 4 : 16));
  chunks = std::max<int64_t>({chunks, ceil_div(n, kMaxChunk), 1});
  const int64_t chunk_len = n == 0 ? 0 : ceil_div(n, chunks);
  chunks = n == 0 ? 1 : ceil_div(n, chunk_len);
  const int64_t items = columns * chunks;
  const int64_t grid = knob ? blocks : std::min(ceil_div(items, threads), resident_blocks);
  State<K>* partials =
      chunks > 1 ? static_cast<State<K>*>(workspace.allocate(size_t(items) * sizeof(State<K>))) : nullptr;
  kernel<<<unsigned(grid), unsigned(threads), 0, stream>>>(x, outer, n, inner, chunk_len, chunks, partials, mean,
                                                          out_type, out);
  GPUPRIM_LAUNCH_CHECK();
  if (chunks > 1) {
    const int64_t combine_grid = std::min(ceil_div(columns, threads), resident_blocks);
    sum_columns_combine_kernel<K><<<unsigned(combine_grid), unsigned(threads), 0, stream>>>(
        partials, columns, chunks, n, mean, out_type, out);
    GPUPRIM_LAUNCH_CHECK();
  }
}

}  // namespace

void sum_cuda_launch(const void* x, DType in_type, void* out, DType out_type, int64_t rows, int64_t cols, bool mean,
                     int64_t blocks, int64_t threads, Workspace& workspace, cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("sum", in_type, [&] {
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double> ||
                  std::is_same_v<scalar_t, __half> || std::is_same_v<scalar_t, __nv_bfloat16>) {
      sum_rows<scalar_t>(static_cast<const scalar_t*>(x), rows, cols, mean, out_type, out, blocks, threads, workspace,
                         stream);
    } else {
      unsupported_dtype("sum", in_type);
    }
  });
}

void sum_cuda_launch_columns(const void* x, DType in_type, void* out, DType out_type, int64_t outer, int64_t n,
                             int64_t inner, bool mean, int64_t blocks, int64_t threads, Workspace& workspace,
                             cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("sum", in_type, [&] {
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double> ||
                  std::is_same_v<scalar_t, __half> || std::is_same_v<scalar_t, __nv_bfloat16>) {
      sum_columns<scalar_t>(static_cast<const scalar_t*>(x), outer, n, inner, mean, out_type, out, blocks, threads,
                            workspace, stream);
    } else {
      unsupported_dtype("sum", in_type);
    }
  });
}

}  // namespace gpuprim
