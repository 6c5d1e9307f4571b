// Sorted-index reduction of source rows into destination rows: the deterministic engine behind
// index_add / scatter_add / scatter_reduce (and, later, embedding_bag's backward).
//
// Given the destination row of every source item, already sorted by a stable radix sort that carries the
// item positions (keys: destination rows, invalid ones mapped to `rows`, sorted last; see make_keys_kernel):
//   chunk_kernel    the sorted items are cut into fixed chunks of kChunkItems items. For each (outer slice,
//                   chunk, column tile), `lanes` threads walk the chunk's items in sorted (= original position)
//                   order, gathering src rows and folding each run of equal keys in Acc. A run that lies
//                   inside the chunk is finalized and stored into out directly. A run cut by a chunk boundary
//                   stores its piece in workspace: slot 0 for the piece that continues a run begun in an
//                   earlier chunk, slot 1 for the piece that starts a run that continues; the chunk holding a
//                   slot-1 piece owns the run and is appended to the owner list (its order does not matter).
//   combine_kernel  for each owner, one block folds the slot-0 pieces of the following chunks (found by a
//                   galloping search over chunk heads) with a fixed thread layout and a fixed tree, adds the
//                   owner's own piece first, and finalizes. A hot row (all-equal indices) thus becomes
//                   items / kChunkItems pieces folded by a whole block instead of one serial walk.
// Every summation order depends only on the sorted keys and the shape, never on timing or the GPU:
// bitwise identical results run to run. No float atomics, no host sync.
#pragma once
#include <cstdint>
#include <type_traits>

#include "prim/util/cuda_check.h"
#include "prim/util/workspace.h"
#include "prim/device/segmented_reduce/reducers.h"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/util/convert.cuh"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace index_reduce {

constexpr int kThreads = 256;
constexpr int64_t kChunkItems = 64;

// Columns per thread: 16-byte loads of T, at most 32 bytes of Acc per thread.
template <typename T>
constexpr int vec_for() {
  using Acc = typename AccOf<T>::type;
  constexpr int by_load = int(16 / sizeof(T));
  constexpr int by_acc = int(32 / sizeof(Acc));
  return by_load < by_acc ? by_load : by_acc;
}

// Threads side by side over one row's column tile: a power of two <= 32 covering ceil(inner / vec) columns.
inline int lanes_for(int64_t inner, int vec) {
  const int64_t needed = (inner + vec - 1) / vec;
  int lanes = 1;
  while (lanes < 32 && lanes < needed) lanes *= 2;
  return lanes;
}

inline int bits_for(uint64_t count) {  // bits to write every value in [0, count)
  int bits = 0;
  while (bits < 64 && (count - 1) >> bits != 0) ++bits;
  return bits > 0 ? bits : 1;
}

struct Layout {
  int64_t outer, items, rows, inner;
  int64_t chunks;     // ceil(items / kChunkItems)
  int lanes;          // threads per (chunk, column tile)
  int64_t col_tiles;  // ceil(inner / (lanes * vec))
};

// keys[i] = index[i] when it lies in [0, rows), else rows (sorted after every valid key); positions[i] = i.
template <typename Index, typename Key, typename Pos>
__global__ void __launch_bounds__(kThreads) make_keys_kernel(const Index* __restrict__ index, int64_t n, int64_t rows,
                                                             Key* __restrict__ keys, Pos* __restrict__ positions) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = static_cast<int64_t>(index[i]);
    keys[i] = static_cast<Key>(r >= 0 && r < rows ? r : rows);
    positions[i] = static_cast<Pos>(i);
  }
}

template <typename T, typename Acc, int Vec>
__device__ __forceinline__ void finalize_row(IndexReduce op, bool include_self, Acc scale, int64_t count,
                                             const Acc (&acc)[Vec], T* out) {
  VecOf<Vec, T> v = load_vec<Vec>(out);
#pragma unroll
  for (int j = 0; j < Vec; ++j) {
    v.items[j] = convert<T>(finalize<T>(op, include_self, convert<Acc>(v.items[j]), acc[j], count, scale));
  }
  store_vec<Vec>(out, v);
}

template <typename T, typename Acc, int Vec>
__device__ __forceinline__ void finalize_columns(IndexReduce op, bool include_self, Acc scale, int64_t count,
                                                 const Acc (&acc)[Vec], T* out, int64_t column, int64_t inner) {
  if (column + Vec <= inner) {
    finalize_row<T, Acc, Vec>(op, include_self, scale, count, acc, out);
  } else {
    for (int j = 0; j < Vec && column + j < inner; ++j) {
      out[j] = convert<T>(finalize<T>(op, include_self, convert<Acc>(out[j]), acc[j], count, scale));
    }
  }
}

// partials: [outer, chunks, 2, inner] Acc; owners: the chunks that own a run cut by their end (unordered).
template <typename T, typename Key, typename Pos, int Vec>
__global__ void __launch_bounds__(kThreads) chunk_kernel(const T* __restrict__ src, const Key* __restrict__ keys,
                                                         const Pos* __restrict__ positions, Layout layout,
                                                         IndexReduce op, bool include_self,
                                                         typename AccOf<T>::type scale, T* __restrict__ out,
                                                         typename AccOf<T>::type* __restrict__ partials,
                                                         int64_t* __restrict__ owners,
                                                         unsigned long long* __restrict__ owner_count) {
  using Acc = typename AccOf<T>::type;
  const int lane = threadIdx.x % layout.lanes;
  const int groups = kThreads / layout.lanes;
  const int64_t n = layout.items;
  const Key invalid = static_cast<Key>(layout.rows);
  const int64_t work = layout.outer * layout.chunks * layout.col_tiles;
  for (int64_t w = int64_t(blockIdx.x) * groups + threadIdx.x / layout.lanes; w < work;
       w += int64_t(gridDim.x) * groups) {
    const int64_t tile = w % layout.col_tiles;
    const int64_t c = (w / layout.col_tiles) % layout.chunks;
    const int64_t o = w / layout.col_tiles / layout.chunks;
    const int64_t begin = c * kChunkItems;
    const int64_t end = begin + kChunkItems < n ? begin + kChunkItems : n;
    const int64_t column = (tile * layout.lanes + lane) * Vec;
    const bool active = column < layout.inner;
    const bool full_vec = column + Vec <= layout.inner;
    const bool continues_in = begin > 0 && keys[begin - 1] == keys[begin];
    const T* src_slice = src + o * n * layout.inner + column;
    T* out_slice = out + o * layout.rows * layout.inner + column;
    int64_t j = begin;
    while (j < end) {
      const Key k = keys[j];
      if (k >= invalid) break;  // sorted: only invalid items follow
      const int64_t run_begin = j;
      // The destination row's current value, fetched now so that its latency overlaps the gathers (only this
      // run ever writes the row; if the run turns out to be cut by the chunk's end the value goes unused).
      VecOf<Vec, T> self;
      if (active && full_vec) {
        self = load_vec<Vec>(out_slice + static_cast<int64_t>(k) * layout.inner);
      }
      Acc acc[Vec];
#pragma unroll
      for (int v = 0; v < Vec; ++v) acc[v] = identity<Acc>(op);
      for (; j < end && keys[j] == k; ++j) {
        if (!active) continue;
        const T* row = src_slice + static_cast<int64_t>(positions[j]) * layout.inner;
        if (full_vec) {
          const VecOf<Vec, T> p = load_vec<Vec>(row);
#pragma unroll
          for (int v = 0; v < Vec; ++v) acc[v] = combine(op, acc[v], convert<Acc>(p.items[v]));
        } else {
          for (int v = 0; v < Vec && column + v < layout.inner; ++v) {
            acc[v] = combine(op, acc[v], convert<Acc>(row[v]));
          }
        }
      }
      const bool from_prev = run_begin == begin && continues_in;
      const bool to_next = j == end && end < n && keys[end] == k;
      if (!from_prev && !to_next) {
        T* out_row = out_slice + static_cast<int64_t>(k) * layout.inner;
        if (active && full_vec) {
#pragma unroll
          for (int v = 0; v < Vec; ++v) {
            self.items[v] = convert<T>(
                finalize<T>(op, include_self, convert<Acc>(self.items[v]), acc[v], j - run_begin, scale));
          }
          store_vec<Vec>(out_row, self);
        } else if (active) {
          finalize_columns<T, Acc, Vec>(op, include_self, scale, j - run_begin, acc, out_row, column, layout.inner);
        }
        continue;
      }
      const int slot = from_prev ? 0 : 1;
      if (slot == 1 && o == 0 && tile == 0 && lane == 0) owners[atomicAdd(owner_count, 1ull)] = c;
      if (active) {
        Acc* piece = partials + ((o * layout.chunks + c) * 2 + slot) * layout.inner + column;
        for (int v = 0; v < Vec && column + v < layout.inner; ++v) piece[v] = acc[v];
      }
    }
  }
}

// Chunk-head galloping search: the last chunk d > c whose first key is k (chunk c + 1 starts with k).
template <typename Key>
__device__ __forceinline__ int64_t last_chunk_of_run(const Key* keys, int64_t chunks, int64_t c, Key k) {
  int64_t lo = c + 1, hi = c + 2, step = 1;
  while (hi < chunks && keys[hi * kChunkItems] == k) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  if (hi > chunks) hi = chunks;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid * kChunkItems] == k) lo = mid; else hi = mid;
  }
  return lo;
}

// First index in [lo, hi) whose key is > k (keys sorted), or hi.
template <typename Key>
__device__ __forceinline__ int64_t upper_bound(const Key* keys, int64_t lo, int64_t hi, Key k) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] <= k) lo = mid + 1; else hi = mid;
  }
  return lo;
}
template <typename Key>
__device__ __forceinline__ int64_t lower_bound(const Key* keys, int64_t lo, int64_t hi, Key k) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// One block per (owner, outer slice) at a time; thread (rt, ct) folds pieces c+1+rt, c+1+rt+row_threads, ...
// of its Vec columns in order, then the row_threads values meet in a fixed tree.
template <typename T, typename Key, int Vec>
__global__ void __launch_bounds__(kThreads) combine_kernel(const Key* __restrict__ keys, Layout layout,
                                                           IndexReduce op, bool include_self,
                                                           typename AccOf<T>::type scale, T* __restrict__ out,
                                                           const typename AccOf<T>::type* __restrict__ partials,
                                                           const int64_t* __restrict__ owners,
                                                           const unsigned long long* __restrict__ owner_count) {
  using Acc = typename AccOf<T>::type;
  __shared__ Acc shared[kThreads * Vec];
  const int col_threads = layout.lanes, row_threads = kThreads / layout.lanes;
  const int ct = threadIdx.x % col_threads, rt = threadIdx.x / col_threads;
  const int64_t work = static_cast<int64_t>(*owner_count) * layout.outer;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int64_t c = owners[w / layout.outer], o = w % layout.outer;
    const int64_t begin = c * kChunkItems;
    const Key k = keys[begin + kChunkItems - 1];  // the owned run ends chunk c (which is full)
    const int64_t run_begin = lower_bound(keys, begin, begin + kChunkItems, k);
    const int64_t d = last_chunk_of_run(keys, layout.chunks, c, k);
    const int64_t d_end = (d + 1) * kChunkItems < layout.items ? (d + 1) * kChunkItems : layout.items;
    const int64_t run_end = upper_bound(keys, d * kChunkItems, d_end, k);
    const Acc* base = partials + (o * layout.chunks) * 2 * layout.inner;
    for (int64_t tile = 0; tile < layout.col_tiles; ++tile) {
      const int64_t column = (tile * col_threads + ct) * Vec;
      const bool active = column < layout.inner;
      Acc acc[Vec];
#pragma unroll
      for (int v = 0; v < Vec; ++v) acc[v] = identity<Acc>(op);
      if (active && column + Vec <= layout.inner) {
        // kInFlight independent piece loads per thread before they are folded (in the same order as one by
        // one): a hot row's pieces are all folded by this block, so it needs the memory parallelism.
        constexpr int kInFlight = 8;
        const int64_t stride = row_threads;
        int64_t q = c + 1 + rt;
        for (; q + (kInFlight - 1) * stride <= d; q += kInFlight * stride) {
          VecOf<Vec, Acc> pieces[kInFlight];
#pragma unroll
          for (int u = 0; u < kInFlight; ++u) {
            pieces[u] = load_vec<Vec>(base + (q + u * stride) * 2 * layout.inner + column);
          }
#pragma unroll
          for (int u = 0; u < kInFlight; ++u) {
#pragma unroll
            for (int v = 0; v < Vec; ++v) acc[v] = combine(op, acc[v], pieces[u].items[v]);
          }
        }
        for (; q <= d; q += stride) {
          const VecOf<Vec, Acc> piece = load_vec<Vec>(base + q * 2 * layout.inner + column);
#pragma unroll
          for (int v = 0; v < Vec; ++v) acc[v] = combine(op, acc[v], piece.items[v]);
        }
      } else if (active) {
        for (int64_t q = c + 1 + rt; q <= d; q += row_threads) {
          const Acc* piece = base + q * 2 * layout.inner + column;
          for (int v = 0; v < Vec && column + v < layout.inner; ++v) acc[v] = combine(op, acc[v], piece[v]);
        }
      }
#pragma unroll
      for (int v = 0; v < Vec; ++v) shared[threadIdx.x * Vec + v] = acc[v];
      for (int half = row_threads / 2; half > 0; half /= 2) {
        __syncthreads();
        if (rt < half) {
#pragma unroll
          for (int v = 0; v < Vec; ++v) {
            shared[threadIdx.x * Vec + v] =
                combine(op, shared[threadIdx.x * Vec + v], shared[(threadIdx.x + half * col_threads) * Vec + v]);
          }
        }
      }
      __syncthreads();
      if (rt == 0 && active) {
        const Acc* own = base + (c * 2 + 1) * layout.inner + column;
        Acc total[Vec];
#pragma unroll
        for (int v = 0; v < Vec; ++v) {
          total[v] = column + v < layout.inner ? combine(op, own[v], shared[threadIdx.x * Vec + v]) : Acc(0);
        }
        T* out_row = out + (o * layout.rows + static_cast<int64_t>(k)) * layout.inner + column;
        finalize_columns<T, Acc, Vec>(op, include_self, scale, run_end - run_begin, total, out_row, column,
                                      layout.inner);
      }
      __syncthreads();  // shared is rewritten by the next tile / work item
    }
  }
}

// Non-deterministic kSum: one atomicAdd per element (fp32, fp64, int32, int64 only).
__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int32_t* p, int32_t v) { atomicAdd(reinterpret_cast<int*>(p), int(v)); }
__device__ __forceinline__ void atomic_add(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <typename T, typename Index>
__global__ void __launch_bounds__(kThreads) atomic_sum_kernel(const T* __restrict__ src,
                                                              const Index* __restrict__ index,
                                                              int64_t outer, int64_t items, int64_t rows,
                                                              int64_t inner, T scale, T* __restrict__ out) {
  const int64_t total = outer * items * inner;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t column = e % inner;
    const int64_t i = (e / inner) % items;
    const int64_t o = e / inner / items;
    const int64_t r = static_cast<int64_t>(index[i]);
    if (r < 0 || r >= rows) continue;
    T v = src[e];
    if (scale != T(1)) {
      if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(static_cast<uint64_t>(v) * static_cast<uint64_t>(scale));
      } else {
        v = v * scale;
      }
    }
    atomic_add(out + (o * rows + r) * inner + column, v);
  }
}

// ---------------------------------------------------------------- host side

inline unsigned grid_for(int64_t work, int64_t per_block, int64_t cap = int64_t(1) << 22) {
  int64_t blocks = (work + per_block - 1) / per_block;
  if (blocks > cap) blocks = cap;
  return static_cast<unsigned>(blocks > 0 ? blocks : 1);
}

// The destinations of `items` source items sorted with their positions (keys[i] = rows for invalid items).
template <typename Key, typename Pos>
struct SortedIndex {
  const Key* keys;
  const Pos* positions;
};

template <typename Index, typename Key, typename Pos>
SortedIndex<Key, Pos> sort_index(const Index* index, int64_t items, int64_t rows, Workspace& workspace,
                                 cudaStream_t stream) {
  Key* keys[2];
  Pos* positions[2];
  for (int b = 0; b < 2; ++b) {
    keys[b] = static_cast<Key*>(workspace.allocate(sizeof(Key) * items));
    positions[b] = static_cast<Pos*>(workspace.allocate(sizeof(Pos) * items));
  }
  make_keys_kernel<Index, Key, Pos><<<grid_for(items, kThreads), kThreads, 0, stream>>>(index, items, rows, keys[0],
                                                                                        positions[0]);
  GPUPRIM_LAUNCH_CHECK();
  const int end_bit = bits_for(static_cast<uint64_t>(rows) + 1);  // keys lie in [0, rows]
  // Stable (destination key, item position) sort on the key bits [0, end_bit) (common/radix_sort_cuda.cu).
  const int which = radix_sort::sort_pairs(keys, positions, items, end_bit, workspace, stream);
  return {keys[which], positions[which]};
}

// The launcher interface: out [outer, rows, inner] (holding self) receives the reduction of src
// [outer, items, inner] rows by their sorted destinations (see the top of this file). `combine_blocks` only
// sets how many blocks share the owners' work (results never depend on it).
template <typename T, typename Key, typename Pos>
void reduce_sorted(SortedIndex<Key, Pos> sorted, const T* src, int64_t outer, int64_t items, int64_t rows,
                   int64_t inner, IndexReduce op, bool include_self, typename AccOf<T>::type scale, T* out,
                   int combine_blocks, Workspace& workspace, cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  if (outer == 0 || items == 0 || rows == 0 || inner == 0) return;
  constexpr int kVec = vec_for<T>();
  const bool vector = inner % kVec == 0 && reinterpret_cast<uintptr_t>(src) % (sizeof(T) * kVec) == 0 &&
                      reinterpret_cast<uintptr_t>(out) % (sizeof(T) * kVec) == 0;
  const int vec = vector ? kVec : 1;
  Layout layout;
  layout.outer = outer;
  layout.items = items;
  layout.rows = rows;
  layout.inner = inner;
  layout.chunks = (items + kChunkItems - 1) / kChunkItems;
  layout.lanes = lanes_for(inner, vec);
  layout.col_tiles = (inner + int64_t(layout.lanes) * vec - 1) / (int64_t(layout.lanes) * vec);
  Acc* partials = static_cast<Acc*>(workspace.allocate(sizeof(Acc) * outer * layout.chunks * 2 * inner));
  auto* owners = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * layout.chunks));
  auto* owner_count = static_cast<unsigned long long*>(workspace.allocate(sizeof(unsigned long long)));
  GPUPRIM_CUDA_CHECK(cudaMemsetAsync(owner_count, 0, sizeof(unsigned long long), stream));
  const int64_t work = outer * layout.chunks * layout.col_tiles;
  const unsigned chunk_grid = grid_for(work, kThreads / layout.lanes);
  const unsigned combine_grid = grid_for(outer * layout.chunks, 1, combine_blocks > 0 ? combine_blocks : 1);
  if (vector) {
    chunk_kernel<T, Key, Pos, kVec><<<chunk_grid, kThreads, 0, stream>>>(
        src, sorted.keys, sorted.positions, layout, op, include_self, scale, out, partials, owners, owner_count);
    GPUPRIM_LAUNCH_CHECK();
    combine_kernel<T, Key, kVec><<<combine_grid, kThreads, 0, stream>>>(sorted.keys, layout, op, include_self, scale,
                                                                        out, partials, owners, owner_count);
  } else {
    chunk_kernel<T, Key, Pos, 1><<<chunk_grid, kThreads, 0, stream>>>(
        src, sorted.keys, sorted.positions, layout, op, include_self, scale, out, partials, owners, owner_count);
    GPUPRIM_LAUNCH_CHECK();
    combine_kernel<T, Key, 1><<<combine_grid, kThreads, 0, stream>>>(sorted.keys, layout, op, include_self, scale,
                                                                     out, partials, owners, owner_count);
  }
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace index_reduce
}  // namespace gpuprim
