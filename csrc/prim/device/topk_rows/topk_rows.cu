// The row top-k's entry (topk_rows.h): the path for the row length, k and key width; for k beyond the block
// sort, the selection in position order put in final order by the prim row sort.
#include "prim/device/topk_rows/topk_rows.h"

#include "prim/device/radix_sort/radix_sort.cuh"
#include "prim/device/topk_rows/row_select.cuh"
#include "prim/device/topk_rows/short_rows.cuh"
#include "prim/device/topk_rows/warp_rows.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/device_info.h"
#include "prim/util/launch.h"

namespace gpuprim {
namespace topk_rows {
namespace {

// indices[i] = selected[the row's first + order[i]]: each row's selected positions in the order the sort put
// their values in (rows of k).
__global__ void gather_positions_kernel(const int64_t* __restrict__ selected, const int64_t* __restrict__ order,
                                        int64_t total, int64_t k, int64_t* __restrict__ indices) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    indices[i] = selected[i - i % k + order[i]];
  }
}

template <typename T>
T* allocate(Workspace& workspace, int64_t count) {
  return static_cast<T*>(workspace.allocate(size_t(count) * sizeof(T)));
}

// k > Tuning::kBlockSortMax: the radix select leaves each row in selection order (better than the k-th key,
// then equal to it, each in position order); a stable sort of the values by key, best first, puts them in final
// order (equal keys are in one group, so they stay in position order), and the positions follow the sort's.
template <typename Bits>
void select_then_sort(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                      int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  const int64_t total = rows * k;
  Bits* selected_values = allocate<Bits>(workspace, total);
  int64_t* selected_indices = allocate<int64_t>(workspace, total);
  if (multi_block_applies(rows, n)) {
    multi_block_select(x, rows, n, k, codec, selected_values, selected_indices, workspace, stream);
  } else {
    radix_select(x, rows, n, k, codec, selected_values, selected_indices, stream);
  }
  const KeyCodec<Bits> best_first{codec.kind, codec.inf_bits, !codec.descending};  // a larger key first
  int64_t* order = allocate<int64_t>(workspace, total);
  radix_sort::sort_rows(selected_values, best_first, rows, k, values, order, workspace, stream);
  gather_positions_kernel<<<grid_for(total, kBlockThreads), kBlockThreads, 0, stream>>>(selected_indices, order,
                                                                                        total, k, indices);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

template <typename Bits>
void topk(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values, int64_t* indices,
          Workspace& workspace, cudaStream_t stream) {
  if (n <= short_rows::kMaxRow && k <= Tuning::kShortMaxK) {
    if constexpr (sizeof(Bits) <= 4) {
      short_rows::topk_short_rows<Bits>(x, rows, n, k, codec, values, indices, current_device_info().sm_count,
                                        stream);
      GPUPRIM_LAUNCH_CHECK();
    } else {
      topk_warp_rows<Bits>(x, rows, n, k, codec, values, indices, stream);
    }
    return;
  }
  if constexpr (sizeof(Bits) == 2 || sizeof(Bits) == 4) {
    if (filter_topk_applies(n, k, sizeof(Bits))) {
      return filter_topk(x, rows, n, k, codec, values, indices, workspace, stream);
    }
  }
  if (k == 1) return arg_best(x, rows, n, codec, values, indices, workspace, stream);
  if (k > Tuning::kBlockSortMax) return select_then_sort(x, rows, n, k, codec, values, indices, workspace, stream);
  if (multi_block_applies(rows, n)) {
    return multi_block_select(x, rows, n, k, codec, values, indices, workspace, stream);
  }
  radix_select(x, rows, n, k, codec, values, indices, stream);
}

#define GPUPRIM_INSTANTIATE_TOPK_ROWS(BITS)                                                                   \
  template void topk<BITS>(const BITS*, int64_t, int64_t, int64_t, KeyCodec<BITS>, BITS*, int64_t*, Workspace&, \
                           cudaStream_t);
GPUPRIM_INSTANTIATE_TOPK_ROWS(uint8_t)
GPUPRIM_INSTANTIATE_TOPK_ROWS(uint16_t)
GPUPRIM_INSTANTIATE_TOPK_ROWS(uint32_t)
GPUPRIM_INSTANTIATE_TOPK_ROWS(uint64_t)

}  // namespace topk_rows
}  // namespace gpuprim
