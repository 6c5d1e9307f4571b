// Launchers of gpuprim::segment_reduce (prim's CSR segmented reduction) and its backward kernels.
#include <algorithm>
#include <cstdint>

#include "ops/reduce/segment_reduce/segment_reduce_launch.h"
#include "prim/device/segmented_reduce/csr_reduce.cuh"
#include "prim/util/dispatch.h"

namespace gpuprim {
namespace {

using namespace segmented;
constexpr int kThreads = kCsrThreads;

CsrShape csr(const SegmentShape& s) { return {s.outer, s.rows, s.inner, s.segments}; }

constexpr long long kNoRow = 0x7f7f7f7f7f7f7f7fLL;  // what cudaMemset(0x7f) leaves: larger than any row

// Widest load (16 bytes at most) that divides the row length and suits every pointer; only 1 or the widest
// are instantiated, to keep compile time down.
int vector_width(int64_t inner, int64_t element_size, const void* a, const void* b = nullptr) {
  const int widest = static_cast<int>(16 / element_size);
  const bool fits = inner % widest == 0 && aligned(a, 16) && aligned(b, 16);
  return fits ? widest : 1;
}

template <typename T, typename Op>
void reduce_dispatch_vec(const T* src, const int64_t* offsets, const SegmentShape& shape, bool mean,
                         const InputCheck& check, T* out, Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  constexpr int kVec = 16 / sizeof(T), kAccVec = 16 / sizeof(Acc);
  // Partials come from the workspace (256-byte aligned): only the row length decides their width.
  if (vector_width(shape.inner, sizeof(T), src) == kVec && shape.inner % kAccVec == 0) {
    csr_reduce<T, Op, kVec, kAccVec>(src, offsets, csr(shape), mean, check, out, workspace, stream);
  } else {
    csr_reduce<T, Op, 1, 1>(src, offsets, csr(shape), mean, check, out, workspace, stream);
  }
}

// ---------------------------------------------------------------- backward
// sum/mean: every row takes its segment's gradient (over its count for mean); rows in no segment get 0.
template <typename T, int Vec>
__global__ void __launch_bounds__(kThreads) expand_kernel(const T* __restrict__ grad,
                                                          const int64_t* __restrict__ offsets,
                                                          SegmentShape shape, Tiling tiling, bool mean,
                                                          T* __restrict__ grad_src) {
  using Acc = typename AccOf<T>::type;
  const int ct = threadIdx.x % tiling.col_threads, rt = threadIdx.x / tiling.col_threads;
  const int64_t row_groups = (shape.rows + tiling.row_threads - 1) / tiling.row_threads;
  for (int64_t w = blockIdx.x; w < shape.outer * row_groups; w += gridDim.x) {
    const int64_t o = w / row_groups, r = (w % row_groups) * tiling.row_threads + rt;
    if (r >= shape.rows) continue;  // no barriers in this kernel
    const int64_t s = segment_of_row(offsets, shape.segments, shape.rows, r);
    Acc count = Acc(1);
    if (s >= 0 && mean) {
      int64_t lo, hi;
      segment_bounds(offsets, s, shape.rows, lo, hi);
      count = static_cast<Acc>(hi - lo);  // divided (not multiplied by 1/count) exactly as the CPU kernel
    }
    for (int64_t tile = 0; tile < tiling.col_tiles; ++tile) {
      const int64_t column = (tile * tiling.col_threads + ct) * Vec;
      if (column >= shape.inner) break;
      VecOf<Vec, T> v;
      if (s >= 0) {
        v = load_vec<Vec>(grad + (o * shape.segments + s) * shape.inner + column);
        if (mean) {
#pragma unroll
          for (int j = 0; j < Vec; ++j) v.items[j] = convert<T>(convert<Acc>(v.items[j]) / count);
        }
      } else {
#pragma unroll
        for (int j = 0; j < Vec; ++j) v.items[j] = convert<T>(Acc(0));
      }
      *reinterpret_cast<VecOf<Vec, T>*>(grad_src + (o * shape.rows + r) * shape.inner + column) = v;
    }
  }
}

// max/min: the first row of each segment and column whose value equals the result (NaN matches NaN), folded
// over the segment's chunks with an integer atomicMin (order-independent: exact and reproducible).
template <typename T>
__global__ void __launch_bounds__(kThreads) first_match_kernel(const T* __restrict__ src, const T* __restrict__ out,
                                                               const int64_t* __restrict__ offsets,
                                                               const CsrPlan* __restrict__ prefix,
                                                               const int64_t* __restrict__ chunk_segment, Plan plan,
                                                               Tiling tiling, long long* __restrict__ first_row) {
  using Acc = typename AccOf<T>::type;
  __shared__ long long shared[kThreads];
  const int ct = threadIdx.x % tiling.col_threads, rt = threadIdx.x / tiling.col_threads;
  for_each_chunk(offsets, prefix, chunk_segment, plan, tiling, [&](int64_t o, int64_t tile, const ChunkRange& chunk) {
    const int64_t s = chunk.segment;
    const int64_t column = tile * tiling.col_threads + ct;
    long long found = kNoRow;
    if (column < plan.inner) {
      const Acc target = convert<Acc>(out[(o * plan.segments + s) * plan.inner + column]);
      const T* base = src + o * plan.rows * plan.inner + column;
      for (int64_t r = chunk.begin + rt; r < chunk.end; r += tiling.row_threads) {
        const Acc v = convert<Acc>(base[r * plan.inner]);
        if (v == target || (v != v && target != target)) {
          found = r;
          break;  // rows ascend: the first match is this thread's smallest
        }
      }
    }
    shared[threadIdx.x] = found;
    for (int half = tiling.row_threads / 2; half > 0; half /= 2) {
      __syncthreads();
      if (rt < half) shared[threadIdx.x] = min(shared[threadIdx.x], shared[threadIdx.x + half * tiling.col_threads]);
    }
    __syncthreads();
    if (rt == 0 && column < plan.inner && shared[threadIdx.x] != kNoRow) {
      atomicMin(first_row + (o * plan.segments + s) * plan.inner + column, shared[threadIdx.x]);
    }
    __syncthreads();  // shared is rewritten by the next work item
  });
}

template <typename T>
__global__ void __launch_bounds__(kThreads) scatter_kernel(const T* __restrict__ grad,
                                                           const long long* __restrict__ first_row, SegmentShape shape,
                                                           T* __restrict__ grad_src) {
  const int64_t n = shape.outer * shape.segments * shape.inner;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const long long row = first_row[i];
    if (row < 0 || row >= shape.rows) continue;
    const int64_t o = i / (shape.segments * shape.inner), column = i % shape.inner;
    grad_src[(o * shape.rows + row) * shape.inner + column] = grad[i];
  }
}

template <typename T>
void backward(const T* grad, const T* src, const T* out, const int64_t* offsets, const SegmentShape& shape,
              Reduce reduce, const InputCheck& check, T* grad_src, Workspace& workspace, cudaStream_t stream) {
  if (reduce == Reduce::kSum || reduce == Reduce::kMean) {
    const bool mean = reduce == Reduce::kMean;
    constexpr int kVec = 16 / sizeof(T);
    const int vec = vector_width(shape.inner, sizeof(T), grad, grad_src);
    const Tiling tiling = make_tiling(shape.inner, vec);
    const int64_t work = shape.outer * ((shape.rows + tiling.row_threads - 1) / tiling.row_threads);
    if (vec == kVec) {
      auto kernel = expand_kernel<T, kVec>;
      kernel<<<grid_for(work, 1, 16 * resident_blocks(kernel, kThreads)), kThreads, 0, stream>>>(
          grad, offsets, shape, tiling, mean, grad_src);
    } else {
      auto kernel = expand_kernel<T, 1>;
      kernel<<<grid_for(work, 1, 16 * resident_blocks(kernel, kThreads)), kThreads, 0, stream>>>(
          grad, offsets, shape, tiling, mean, grad_src);
    }
    GPUPRIM_LAUNCH_CHECK();
    return;
  }
  if (shape.segments == 0) return;
  const Tiling tiling = make_tiling(shape.inner, 1);
  const Plan plan = make_plan(csr(shape), tiling);
  const ChunkIndex index = index_chunks(offsets, plan, check, workspace, stream);
  const int64_t outputs = shape.outer * shape.segments * shape.inner;
  auto* first_row = static_cast<long long*>(workspace.allocate(sizeof(long long) * outputs));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(first_row, 0x7f, sizeof(long long) * outputs, stream));
  auto kernel = first_match_kernel<T>;
  const int64_t work = plan.outer * plan.chunk_bound * tiling.col_tiles;
  kernel<<<grid_for(work, 1, resident_blocks(kernel, kThreads)), kThreads, 0, stream>>>(
      src, out, offsets, index.scanned, index.chunk_segment, plan, tiling, first_row);
  GPUPRIM_LAUNCH_CHECK();
  scatter_kernel<T><<<grid_for(outputs, kThreads), kThreads, 0, stream>>>(grad, first_row, shape, grad_src);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void segment_reduce_cuda_launch(const void* src, DType type, const int64_t* offsets, SegmentShape shape,
                                Reduce reduce, const InputCheck& check, void* out, Workspace& workspace,
                                cudaStream_t stream) {
  if (shape.outer == 0 || shape.inner == 0 || shape.segments == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(src);
    T* result = static_cast<T*>(out);
    const bool mean = reduce == Reduce::kMean;
    switch (reduce) {
      case Reduce::kMax:
        return reduce_dispatch_vec<T, reducers::Op<Reduce::kMax>>(in, offsets, shape, mean, check, result, workspace,
                                                                  stream);
      case Reduce::kMin:
        return reduce_dispatch_vec<T, reducers::Op<Reduce::kMin>>(in, offsets, shape, mean, check, result, workspace,
                                                                  stream);
      case Reduce::kProd:
        return reduce_dispatch_vec<T, reducers::Op<Reduce::kProd>>(in, offsets, shape, mean, check, result, workspace,
                                                                   stream);
      default:  // sum and mean fold sums
        return reduce_dispatch_vec<T, reducers::Op<Reduce::kSum>>(in, offsets, shape, mean, check, result, workspace,
                                                                  stream);
    }
  };
  dispatch<FloatingTypes>("segment_reduce", type, [&](auto tag) { run(typename decltype(tag)::type()); });
}

void segment_reduce_backward_cuda_launch(const void* grad, const void* src, const void* out, DType type,
                                         const int64_t* offsets, SegmentShape shape, Reduce reduce,
                                         const InputCheck& check, void* grad_src, Workspace& workspace,
                                         cudaStream_t stream) {
  if (shape.outer == 0 || shape.inner == 0 || shape.rows == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    backward<T>(static_cast<const T*>(grad), static_cast<const T*>(src), static_cast<const T*>(out), offsets, shape,
                reduce, check, static_cast<T*>(grad_src), workspace, stream);
  };
  dispatch<FloatingTypes>("segment_reduce_backward", type, [&](auto tag) { run(typename decltype(tag)::type()); });
}

}  // namespace gpuprim
