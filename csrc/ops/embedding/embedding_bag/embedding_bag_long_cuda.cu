// The forward of gpuprim::embedding_bag for long bags (more than kEmbeddingBagLongBag positions), which the
// bag kernel in embedding_bag_cuda.cu skips: one warp walking a bag of 500k ids would serialize the call.
//
// Long bags are cut at fixed windows of kEmbeddingBagLongBag positions (prim/device/segmented_reduce/
// long_segments.cuh: two warp-wide searches per window, no plan pass, no host sync). One kernel:
//   piece    a block takes 4 windows (its 8 warps search at once), then folds each long bag's piece in them
//            into a partial slot (fp32, fp64 for double): thread row rt folds a contiguous run of the piece in
//            position order, kUnroll rows in flight, then the block's rows meet in a fixed tree; also the
//            piece's used-index count (its bad indices are recorded, as the bag kernel does)
//   combine  the block that stores a bag's last piece (a ticket per bag) folds the bag's slots in window order,
//            then mean divides and the result is stored
// max: a partial is the first maximum of the non-NaN values (ties: the earlier position, merged in position
// order) and the first used row; a NaN at the bag's first used row wins, as in the bag kernel's rule
// (first element taken, then strictly greater): max and its indices are exactly those of the bag kernel.
// Every fold order depends only on the offsets, never on the grid or timing: bitwise identical on every run.
// The kernel returns at once unless the bag kernel flagged a long bag in this call (LongBags): an ordinary
// batch pays one empty launch, not the window searches.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>

#include "ops/embedding/embedding_bag/embedding_bag_launch.h"
#include "ops/embedding/embedding_bag/embedding_bag_rows.cuh"
#include "prim/block/row_fold.cuh"
#include "prim/device/segmented_reduce/long_segments.cuh"
#include "prim/device/segmented_reduce/reducers.h"
#include "prim/util/convert.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace {

constexpr int kThreads = kBlockThreads;
constexpr int64_t kWindow = kEmbeddingBagLongBag;
constexpr int kSearches = kThreads / kWarpSize;  // one search per warp: two per window
constexpr int kWindowsPerBlock = kSearches / 2;
using Sum = reducers::Op<Reduce::kSum>;

// A thread's running value of Vec columns. max: arg = the row of the first maximum of the non-NaN values
// (-1: none yet), first = the first used row (-1: none).
template <typename Acc, int Vec, bool Max>
struct State {
  Acc value[Vec];
  int64_t arg[Max ? Vec : 1];
  int64_t first;
  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int j = 0; j < Vec; ++j) value[j] = Acc(0);
#pragma unroll
    for (int j = 0; j < (Max ? Vec : 1); ++j) arg[j] = -1;
    first = -1;
  }
  // Folds in a later run's state (max: the earlier maximum wins ties).
  __device__ __forceinline__ void merge(const Acc* other_value, const int64_t* other_arg, int64_t other_first) {
    if constexpr (Max) {
      if (first < 0) first = other_first;
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        if (other_arg[j] >= 0 && (arg[j] < 0 || other_value[j] > value[j])) {
          value[j] = other_value[j];
          arg[j] = other_arg[j];
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < Vec; ++j) value[j] += other_value[j];
    }
  }
};

// Positions [a, e) of the bag in order, kUnroll rows in flight (the bag kernel's loop).
template <typename T, typename I, int Vec, bool Max, typename Acc>
__device__ __forceinline__ void fold_positions(const T* __restrict__ weight, const I* __restrict__ indices,
                                               const T* __restrict__ psw, const EmbeddingBagShape& s, int64_t a,
                                               int64_t e, int64_t col, State<Acc, Vec, Max>& state) {
  embedding_bag_rows::for_each_row<Vec>(weight, indices, s, a, e, col, [&](int64_t p, const VecOf<Vec, T>& row,
                                                                          int64_t r) {
    if constexpr (Max) {
      if (state.first < 0) state.first = r;
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        const Acc v = convert<Acc>(row.items[j]);
        if (v == v && (state.arg[j] < 0 || v > state.value[j])) {  // NaN: only as the first row (combine)
          state.value[j] = v;
          state.arg[j] = r;
        }
      }
    } else {
      const Acc scale = psw ? convert<Acc>(psw[p]) : Acc(1);
#pragma unroll
      for (int j = 0; j < Vec; ++j) state.value[j] += scale * convert<Acc>(row.items[j]);
    }
  });
}

// Shared memory of the block's fold trees.
template <typename Acc, int Vec, bool Max>
struct TreeShared {
  alignas(16) Acc value[kThreads * Vec];
  int64_t arg[Max ? kThreads * Vec : 1];
  int64_t first[Max ? kThreads : 1];
};

// The row_threads states of each column meet; thread row 0 ends with the block's state. sum: prim's fixed
// tree; max: a tree that always merges a run with the next one (position order, for the ties).
template <typename Acc, int Vec, bool Max>
__device__ __forceinline__ void block_merge(int group, int row_threads, int rt, State<Acc, Vec, Max>& state,
                                            TreeShared<Acc, Vec, Max>& shared) {
  if constexpr (!Max) {
    block_fold_tree<Sum, Vec>(group, row_threads, rt, state.value, shared.value);
  } else {
    for (int step = 1; step < row_threads; step *= 2) {
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        shared.value[threadIdx.x * Vec + j] = state.value[j];
        shared.arg[threadIdx.x * Vec + j] = state.arg[j];
      }
      shared.first[threadIdx.x] = state.first;
      __syncthreads();
      if (rt % (2 * step) == 0 && rt + step < row_threads) {
        const int other = threadIdx.x + step * group;
        state.merge(shared.value + other * Vec, shared.arg + other * Vec, shared.first[other]);
      }
      __syncthreads();
    }
  }
}

// Partial slots: value and arg [slots, dim], first and count [slots].
template <typename Acc>
struct Slots {
  Acc* value;
  int64_t* arg;  // max only
  int64_t* first;
  int64_t* count;
};

// Long bag b = [lo, hi): its slots folded in window order, then stored (mean divides by the used count). The
// whole block calls it, after every piece of the bag is in its slot (the slots are read past L1).
template <typename T, int Vec, bool Max>
__device__ __forceinline__ void combine_bag(const T* __restrict__ weight, int64_t b, int64_t lo, int64_t hi,
                                            const EmbeddingBagShape& s, bool mean, int group,
                                            const Slots<typename AccOf<T>::type>& slots, T* __restrict__ out,
                                            int64_t* __restrict__ bag_size, int64_t* __restrict__ max_indices,
                                            TreeShared<typename AccOf<T>::type, Vec, Max>& shared,
                                            int64_t* counts) {
  using Acc = typename AccOf<T>::type;
  const int lane = threadIdx.x % group, rt = threadIdx.x / group, row_threads = kThreads / group;
  const int64_t n = segmented::long_segment_slots(lo, hi, kWindow);
  int64_t count[1] = {0};  // used indices (integers: any order is exact)
  for (int64_t k = threadIdx.x; k < n; k += kThreads) {
    count[0] += __ldcg(slots.count + segmented::long_segment_slot(lo, kWindow, k));
  }
  block_fold_tree<Sum, 1>(1, kThreads, threadIdx.x, count, counts);
  if (threadIdx.x == 0) {
    counts[0] = count[0];
    bag_size[b] = count[0];
  }
  __syncthreads();
  const int64_t used_count = counts[0];
  // Thread row rt folds a contiguous run of the slots.
  const int64_t per = (n + row_threads - 1) / row_threads;
  const int64_t ka = std::min(n, rt * per), ke = std::min(n, (rt + 1) * per);
  for (int64_t tile = 0; tile * group * Vec < s.dim; ++tile) {
    const int64_t col = (tile * group + lane) * Vec;
    const bool active = col < s.dim;
    State<Acc, Vec, Max> state;
    state.clear();
    const int64_t k_end = active ? ke : ka;
#pragma unroll 4
    for (int64_t k = ka; k < k_end; ++k) {
      const int64_t slot = segmented::long_segment_slot(lo, kWindow, k);
      Acc value[Vec];
      int64_t arg[Max ? Vec : 1];
#pragma unroll
      for (int j = 0; j < Vec; ++j) {
        value[j] = __ldcg(slots.value + slot * s.dim + col + j);
        if constexpr (Max) arg[j] = __ldcg(slots.arg + slot * s.dim + col + j);
      }
      state.merge(value, arg, Max ? __ldcg(slots.first + slot) : -1);
    }
    block_merge<Acc, Vec, Max>(group, row_threads, rt, state, shared);
    if (rt != 0 || !active) continue;
    VecOf<Vec, T> result;
#pragma unroll
    for (int j = 0; j < Vec; ++j) {
      Acc v = state.value[j];
      if constexpr (Max) {
        // The bag kernel takes the first used row as it is, NaN included, and a NaN is never replaced.
        if (state.first >= 0) {
          const Acc at_first = convert<Acc>(weight[state.first * s.dim + col + j]);
          if (at_first != at_first) {
            v = at_first;
            state.arg[j] = state.first;
          }
        }
        if (state.arg[j] < 0) v = Acc(0);
        max_indices[b * s.dim + col + j] = state.arg[j];
      } else if (mean && used_count > 0) {
        v = v / static_cast<Acc>(used_count);
      }
      result.items[j] = convert<T>(v);
    }
    store_vec<Vec>(out + b * s.dim + col, result);
  }
  __syncthreads();  // counts and shared are reused by the next piece
}

template <typename T, typename I, int Vec, bool Max>
__global__ void __launch_bounds__(kThreads) long_bag_kernel(const T* __restrict__ weight,
                                                            const I* __restrict__ indices,
                                                            const int64_t* __restrict__ bounds,
                                                            const T* __restrict__ psw, EmbeddingBagShape s,
                                                            bool mean, int group, InputCheck index_check,
                                                            LongBags long_bags, Slots<typename AccOf<T>::type> slots,
                                                            T* __restrict__ out, int64_t* __restrict__ bag_size,
                                                            int64_t* __restrict__ max_indices) {
  using Acc = typename AccOf<T>::type;
  if (*long_bags.flag != long_bags.token) return;  // the bag kernel met no long bag (block-uniform)
  __shared__ TreeShared<Acc, Vec, Max> shared;
  __shared__ segmented::WindowPiece pieces[kSearches];
  __shared__ int64_t counts[kThreads];
  __shared__ bool last;
  const int lane = threadIdx.x % group, rt = threadIdx.x / group, row_threads = kThreads / group;
  const int64_t windows = (s.nnz + kWindow - 1) / kWindow;
  for (int64_t w0 = int64_t(blockIdx.x) * kWindowsPerBlock; w0 < windows; w0 += int64_t(gridDim.x) * kWindowsPerBlock) {
    // Every warp searches at once: warp k looks for piece k % 2 of window w0 + k / 2 (most find none).
    {
      const int k = threadIdx.x / kWarpSize;
      const int64_t w = w0 + k / 2;
      segmented::WindowPiece piece{-1, 0, 0, 0};
      if (w < windows) piece = segmented::long_segment_piece(bounds, s.bags, s.nnz, kWindow, w, k % 2);
      if (threadIdx.x % kWarpSize == 0) pieces[k] = piece;
    }
    __syncthreads();
#pragma unroll 1
    for (int k = 0; k < kSearches; ++k) {
      const segmented::WindowPiece piece = pieces[k];
      if (piece.segment < 0) continue;  // block-uniform
      // Used indices of the piece; bad ones are recorded (the first of each thread, after its loop).
      int count = 0;
      int64_t bad_p = -1, bad_index = 0;
      for (int64_t p0 = piece.begin; p0 < piece.end; p0 += kThreads) {
        const int64_t p = p0 + threadIdx.x;
        const int64_t index = p < piece.end ? static_cast<int64_t>(indices[p]) : 0;
        const bool in_range = static_cast<uint64_t>(index) < static_cast<uint64_t>(s.num_weights);
        if (p < piece.end && !in_range && bad_p < 0) bad_p = p, bad_index = index;
        count += __syncthreads_count(p < piece.end && in_range && index != s.padding_idx);
      }
      if (bad_p >= 0) record_input_error(index_check, bad_p, bad_index);
      if (threadIdx.x == 0) slots.count[piece.slot] = count;
      // Thread row rt folds a contiguous run of the piece.
      const int64_t length = piece.end - piece.begin, per = (length + row_threads - 1) / row_threads;
      const int64_t a = piece.begin + std::min(length, rt * per), e = piece.begin + std::min(length, (rt + 1) * per);
      for (int64_t tile = 0; tile * group * Vec < s.dim; ++tile) {
        const int64_t col = (tile * group + lane) * Vec;
        const bool active = col < s.dim;
        State<Acc, Vec, Max> state;
        state.clear();
        fold_positions<T, I, Vec, Max>(weight, indices, psw, s, a, active ? e : a, active ? col : 0, state);
        block_merge<Acc, Vec, Max>(group, row_threads, rt, state, shared);
        if (rt != 0 || !active) continue;
        Acc* value = slots.value + piece.slot * s.dim + col;
#pragma unroll
        for (int j = 0; j < Vec; ++j) value[j] = state.value[j];
        if constexpr (Max) {
          int64_t* arg = slots.arg + piece.slot * s.dim + col;
#pragma unroll
          for (int j = 0; j < Vec; ++j) arg[j] = state.arg[j];
          if (tile == 0 && lane == 0) slots.first[piece.slot] = state.first;
        }
      }
      // The block that stores a bag's last piece combines the bag (the tickets start at 0: the bag kernel).
      __threadfence();  // this piece's slot before its ticket
      __syncthreads();
      int64_t lo, hi;
      segment_bounds(bounds, piece.segment, s.nnz, lo, hi);
      if (threadIdx.x == 0) {
        const unsigned pieces_of_bag = static_cast<unsigned>(segmented::long_segment_slots(lo, hi, kWindow));
        last = atomicAdd(long_bags.tickets + lo / kWindow, 1u) + 1 == pieces_of_bag;
      }
      __syncthreads();
      if (last) {  // block-uniform (shared)
        __threadfence();  // the other pieces' slots after their tickets
        combine_bag<T, Vec, Max>(weight, piece.segment, lo, hi, s, mean, group, slots, out, bag_size, max_indices,
                                 shared, counts);
      }
    }
    __syncthreads();  // pieces is rewritten for the next windows
  }
}

template <typename T, typename I>
void launch_long_bags(const T* weight, const I* indices, const int64_t* bounds, const T* psw,
                      const EmbeddingBagShape& s, EmbeddingBagMode mode, const InputCheck& index_check,
                      LongBags long_bags, T* out, int64_t* bag_size, int64_t* max_indices, Workspace& workspace,
                      cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  const bool max = mode == EmbeddingBagMode::kMax;
  const int64_t windows = (s.nnz + kWindow - 1) / kWindow, n_slots = 2 * windows;
  const int64_t slot_elements = n_slots * std::max<int64_t>(s.dim, 1);
  Slots<Acc> slots{static_cast<Acc*>(workspace.allocate(sizeof(Acc) * slot_elements)),
                   max ? static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * slot_elements)) : nullptr,
                   static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * n_slots)),
                   static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * n_slots))};
  const auto launch = [&](auto vec, auto is_max) {
    constexpr int kVec = decltype(vec)::value;
    constexpr bool kMax = decltype(is_max)::value;
    const int group = embedding_bag_rows::lanes_per_row(s.dim, kVec);
    auto kernel = long_bag_kernel<T, I, kVec, kMax>;
    kernel<<<grid_for(windows, kWindowsPerBlock, resident_blocks(kernel, kThreads)), kThreads, 0, stream>>>(
        weight, indices, bounds, psw, s, mode == EmbeddingBagMode::kMean, group, index_check, long_bags, slots, out,
        bag_size, max_indices);
    GPUPRIM_LAUNCH_CHECK();
  };
  constexpr int kVec = 16 / sizeof(T);
  const bool wide = s.dim % kVec == 0 && aligned(weight, 16) && aligned(out, 16);
  const auto by_mode = [&](auto vec) {
    if (max) {
      launch(vec, std::true_type());
    } else {
      launch(vec, std::false_type());
    }
  };
  if (wide) {
    by_mode(std::integral_constant<int, kVec>());
  } else {
    by_mode(std::integral_constant<int, 1>());
  }
}

}  // namespace

uint64_t embedding_bag_long_bag_token() {
  static std::atomic<uint64_t> next{(uint64_t(std::random_device()()) << 32) ^ std::random_device()()};
  uint64_t z = next.fetch_add(0x9e3779b97f4a7c15ull) + 0x9e3779b97f4a7c15ull;  // splitmix64: distinct outputs
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void embedding_bag_long_bags_cuda_launch(const void* weight, DType type, const void* indices, DType index_type,
                                         const int64_t* bounds, const void* per_sample_weights,
                                         EmbeddingBagShape shape, EmbeddingBagMode mode,
                                         const InputCheck& index_check, LongBags long_bags, void* out,
                                         int64_t* bag_size, int64_t* max_indices, Workspace& workspace,
                                         cudaStream_t stream) {
  if (shape.bags == 0 || shape.nnz <= kWindow) return;  // no bag can be long
  dispatch<FloatingTypes>("embedding_bag", type, [&](auto tag) {
    dispatch<IndexTypes>("embedding_bag", index_type, [&](auto index_tag) {
      using T = typename decltype(tag)::type;
      using I = typename decltype(index_tag)::type;
      launch_long_bags<T, I>(static_cast<const T*>(weight), static_cast<const I*>(indices), bounds,
                             static_cast<const T*>(per_sample_weights), shape, mode, index_check, long_bags,
                             static_cast<T*>(out), bag_size, max_indices, workspace, stream);
    });
  });
}

}  // namespace gpuprim
