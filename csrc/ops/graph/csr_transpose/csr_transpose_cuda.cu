// Launcher of gpuprim::csr_transpose: prim's stable radix sort of (col, position) pairs, then the offsets of
// the transpose by a binary search per column and the row ids by a binary search per nonzero. Integers only:
// exact, and equal to the CPU kernel's counting sort.
#include <algorithm>
#include <cstdint>

#include "ops/graph/csr_transpose/csr_transpose_launch.h"
#include "prim/device/merge_path/csr_check.cuh"
#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/segmented_reduce/index_keys.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace {

constexpr int kThreads = kBlockThreads;

// crow_t[c] = the number of sorted keys below c; also checks crow.
template <typename I, typename Key>
__global__ void __launch_bounds__(kThreads) offsets_kernel(const Key* __restrict__ sorted, const I* __restrict__ crow,
                                                           int64_t rows, int64_t cols, int64_t nnz,
                                                           InputCheck crow_check, I* __restrict__ crow_t) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c <= cols; c += stride) {
    int64_t lo = 0, hi = nnz;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<int64_t>(sorted[mid]) < c) lo = mid + 1; else hi = mid;
    }
    crow_t[c] = static_cast<I>(lo);
  }
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows; r += stride) {
    merge_path::check_crow_entry(crow_check, crow, r, rows, nnz);
  }
}

template <typename I>
__global__ void __launch_bounds__(kThreads) rows_kernel(const int64_t* __restrict__ sorted_positions,
                                                        const I* __restrict__ crow, int64_t rows, int64_t nnz,
                                                        I* __restrict__ col_t, int64_t* __restrict__ perm) {
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < nnz; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = sorted_positions[p];
    perm[p] = k;
    col_t[p] = static_cast<I>(merge_path::row_of_nonzero(crow, rows, nnz, k));
  }
}

template <typename I, typename Key>
void run(const I* crow, const I* col, int64_t rows, int64_t cols, int64_t nnz, const InputCheck& crow_check,
         const InputCheck& col_check, I* crow_t, I* col_t, int64_t* perm, Workspace& workspace, cudaStream_t stream) {
  Key* keys[2];
  int64_t* positions[2];
  for (int b = 0; b < 2; ++b) {
    keys[b] = static_cast<Key*>(workspace.allocate(sizeof(Key) * std::max<int64_t>(nnz, 1)));
    positions[b] = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * std::max<int64_t>(nnz, 1)));
  }
  if (nnz > 0) {
    // keys = col (bad entries: cols, sorted past every valid one), positions = 0..nnz-1.
    segmented::make_keys_kernel<I, Key, int64_t><<<grid_for(nnz, kBlockThreads), kBlockThreads, 0, stream>>>(
        col, nnz, cols, segmented::IndexErrors{col_check, nullptr}, keys[0], positions[0]);
    GPUPRIM_LAUNCH_CHECK();
  }
  const int out = nnz > 0 ? radix_sort::sort_pairs<Key, int64_t>(keys, positions, nnz,
                                                                   bits_to_hold(static_cast<uint64_t>(cols)),
                                                                   workspace, stream)
                          : 0;
  offsets_kernel<I, Key><<<grid_for(std::max(cols, rows) + 1, kThreads), kThreads, 0, stream>>>(
      keys[out], crow, rows, cols, nnz, crow_check, crow_t);
  GPUPRIM_LAUNCH_CHECK();
  if (nnz == 0 || rows == 0) return;
  rows_kernel<I><<<grid_for(nnz, kThreads), kThreads, 0, stream>>>(positions[out], crow, rows, nnz, col_t, perm);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void csr_transpose_cuda_launch(const void* crow, const void* col, DType index_type, int64_t rows, int64_t cols,
                               int64_t nnz, const InputCheck& crow_check, const InputCheck& col_check, void* crow_t,
                               void* col_t, int64_t* perm, Workspace& workspace, cudaStream_t stream) {
  dispatch<IndexTypes>("csr_transpose", index_type, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const auto go = [&](auto key_tag) {
      using Key = typename decltype(key_tag)::type;
      run<I, Key>(static_cast<const I*>(crow), static_cast<const I*>(col), rows, cols, nnz, crow_check, col_check,
                  static_cast<I*>(crow_t), static_cast<I*>(col_t), perm, workspace, stream);
    };
    if (static_cast<uint64_t>(cols) <= 0xFFFFFFFFull) go(TypeTag<uint32_t>{}); else go(TypeTag<uint64_t>{});
  });
}

}  // namespace gpuprim
