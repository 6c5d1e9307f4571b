// Kernels of gpuprim::run_length_encode: two passes over x in tiles of kTile elements, 64-bit sizes, no
// host sync. Element i heads a run when i == 0 or x[i] != x[i-1] under the dtype's == (NaN != NaN,
// -0.0 == +0.0).
//   1. count_kernel: per tile, its heads and its last head's position (-1: none);
//   2. CUB's exclusive scan of those pairs (sum of heads, max of positions): per tile, the runs before it
//      and the head of the run it starts in;
//   3. write_kernel: per tile again, a block scan of the threads' pairs; a head at i opening run r writes
//      unique[r] = x[i] and the previous run's length counts[r-1] = i - its head; a non-head at i, the j-th
//      non-head overall (j = i - r), writes the zeros of unique and counts at n - 1 - j, so the tail
//      [num_runs, n) is filled from the end without knowing num_runs; element n - 1 writes the last
//      run's length and num_runs.
// Bytes: x read twice, unique and counts written once (n * (sizeof(T) + 8)), nothing else of size n.
// H200, 256M int32 with runs of ~8 (2026-12-01): 2.09 ms before (CUB's DeviceSelect::If of the head
// positions, then a pass gathering x at them and writing the outputs; CUB's DeviceRunLengthEncode::Encode,
// a reduce-by-key with int sizes, was 2x slower still).
#include <cstdint>
#include <type_traits>

#include "common/cuda_check.h"
#include "common/launch_utils.h"
#include "ops/run_length_encode/run_length_encode_launch.h"
#include "prim/cub.cuh"
#include "prim/types.cuh"

namespace gpuprim {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 16;  // consecutive elements per thread
constexpr int64_t kTile = int64_t(kThreads) * kItems;

// Runs counted so far and the position of the last head among them (-1: none yet).
struct RunsPrefix {
  int64_t runs;
  int64_t last_head;
};
struct RunsPrefixOp {
  __host__ __device__ RunsPrefix operator()(const RunsPrefix& a, const RunsPrefix& b) const {
    return {a.runs + b.runs, a.last_head > b.last_head ? a.last_head : b.last_head};
  }
};

template <int kSize> struct WordOf;
template <> struct WordOf<1> { using type = uint8_t; };
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint64_t; };

template <typename T, typename Word>
__device__ __forceinline__ bool same_value(Word a, Word b) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    T x, y;
    __builtin_memcpy(&x, &a, sizeof(T));
    __builtin_memcpy(&y, &b, sizeof(T));
    if constexpr (std::is_same_v<T, __half>) {
      return __half2float(x) == __half2float(y);
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      return __bfloat162float(x) == __bfloat162float(y);
    } else {
      return x == y;
    }
  } else {
    return a == b;  // integers and bool: equal values are equal bits
  }
}

// A thread's kItems consecutive elements from `first` (16-byte loads when aligned and whole), the element
// before them in `before` (when first > 0), and its heads as bits of `heads`.
template <typename T, typename Word>
__device__ __forceinline__ void load_items(const Word* __restrict__ x, int64_t n, int64_t first, bool vector,
                                           Word (&items)[kItems], uint32_t& heads) {
  if (vector && first + kItems <= n) {
    constexpr int kPerLoad = 16 / sizeof(Word);
#pragma unroll
    for (int v = 0; v < kItems / kPerLoad; ++v) {
      const uint4 raw = *reinterpret_cast<const uint4*>(x + first + v * kPerLoad);
      __builtin_memcpy(items + v * kPerLoad, &raw, 16);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) items[k] = first + k < n ? x[first + k] : Word(0);
  }
  heads = 0;
  Word previous = first > 0 && first < n ? x[first - 1] : Word(0);
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int64_t i = first + k;
    if (i < n && (i == 0 || !same_value<T>(items[k], previous))) heads |= 1u << k;
    previous = items[k];
  }
}

// The thread's pair: its heads and the position of its last one.
__device__ __forceinline__ RunsPrefix thread_runs(int64_t first, uint32_t heads) {
  return {__popc(heads), heads != 0 ? first + (31 - __clz(heads)) : int64_t(-1)};
}

template <typename T, typename Word>
__global__ void __launch_bounds__(kThreads) count_kernel(const Word* __restrict__ x, int64_t n, bool vector,
                                                         RunsPrefix* __restrict__ tile_runs) {
  using BlockReduce = cub::BlockReduce<RunsPrefix, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int64_t first = int64_t(blockIdx.x) * kTile + int64_t(threadIdx.x) * kItems;
  Word items[kItems];
  uint32_t heads;
  load_items<T>(x, n, first, vector, items, heads);
  const RunsPrefix tile = BlockReduce(temp).Reduce(thread_runs(first, heads), RunsPrefixOp());
  if (threadIdx.x == 0) tile_runs[blockIdx.x] = tile;
}

template <typename T, typename Word>
__global__ void __launch_bounds__(kThreads)
    write_kernel(const Word* __restrict__ x, int64_t n, bool vector, const RunsPrefix* __restrict__ tile_before,
                 Word* __restrict__ unique, int64_t* __restrict__ counts, int64_t* __restrict__ num_runs) {
  using BlockScan = cub::BlockScan<RunsPrefix, kThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  const int64_t first = int64_t(blockIdx.x) * kTile + int64_t(threadIdx.x) * kItems;
  Word items[kItems];
  uint32_t heads;
  load_items<T>(x, n, first, vector, items, heads);
  RunsPrefix before;
  BlockScan(temp).ExclusiveScan(thread_runs(first, heads), before, RunsPrefix{0, -1}, RunsPrefixOp());
  before = RunsPrefixOp()(tile_before[blockIdx.x], before);
  int64_t r = before.runs, head = before.last_head;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int64_t i = first + k;
    if (i >= n) break;
    if (heads & (1u << k)) {
      unique[r] = items[k];
      if (r > 0) counts[r - 1] = i - head;
      head = i;
      ++r;
    } else {
      const int64_t tail = n - 1 - (i - r);
      unique[tail] = Word(0);
      counts[tail] = 0;
    }
    if (i == n - 1) {
      counts[r - 1] = n - head;
      *num_runs = r;
    }
  }
}

template <typename T>
void encode(const T* x, int64_t n, T* unique, int64_t* counts, int64_t* num_runs, Workspace& workspace,
            cudaStream_t stream) {
  using Word = typename WordOf<sizeof(T)>::type;
  const auto* words = reinterpret_cast<const Word*>(x);
  const int64_t tiles = (n + kTile - 1) / kTile;
  const bool vector = aligned(x, 16);
  auto* tile_runs = static_cast<RunsPrefix*>(workspace.allocate(sizeof(RunsPrefix) * tiles));
  auto* tile_before = static_cast<RunsPrefix*>(workspace.allocate(sizeof(RunsPrefix) * tiles));
  count_kernel<T, Word><<<unsigned(tiles), kThreads, 0, stream>>>(words, n, vector, tile_runs);
  GPUPRIM_LAUNCH_CHECK();
  size_t temp_bytes = 0;
  GPUPRIM_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, temp_bytes, tile_runs, tile_before, RunsPrefixOp(),
                                                    RunsPrefix{0, -1}, tiles, stream));
  void* temp = workspace.allocate(temp_bytes == 0 ? 1 : temp_bytes);
  GPUPRIM_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp, temp_bytes, tile_runs, tile_before, RunsPrefixOp(),
                                                    RunsPrefix{0, -1}, tiles, stream));
  write_kernel<T, Word><<<unsigned(tiles), kThreads, 0, stream>>>(words, n, vector, tile_before,
                                                                  reinterpret_cast<Word*>(unique), counts, num_runs);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void run_length_encode_cuda_launch(const void* x, DType type, int64_t n, void* unique, int64_t* counts,
                                   int64_t* num_runs, Workspace& workspace, cudaStream_t stream) {
  if (n == 0) {
    GPUPRIM_CUDA_CHECK(cudaMemsetAsync(num_runs, 0, sizeof(int64_t), stream));
    return;
  }
  GPUPRIM_DISPATCH_ALL("run_length_encode", type, [&] {
    encode<scalar_t>(static_cast<const scalar_t*>(x), n, static_cast<scalar_t*>(unique), counts, num_runs, workspace,
                     stream);
  });
}

}  // namespace gpuprim
