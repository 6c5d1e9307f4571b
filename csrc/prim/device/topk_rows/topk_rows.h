// The row top-k of prim (ATen-free): the top k of each row of a contiguous [rows, n] array of keys, best first,
// for gpuprim::topk and any op that ranks rows. Paths (each a launcher of its own file):
//   rows of <= 512 elements, k <= 64: a group of G lanes per row (short_rows.cuh; 8-byte keys: a warp per row,
//     warp_rows.cuh), the row in registers;
//   16- and 32-bit keys, k <= 1024, rows < 2^32 - 1 elements: the threshold filter, one read of the row
//     (filter.cu);
//   k = 1 (other rows): a block-wide argmax per row, or per slice and then over the slices' winners (arg_best.cu);
//   few long rows (rows <= SMs / 2, n >= 2^14): several blocks per row, one launch per step of the radix select
//     (multi_block.cu);
//   other rows: one block per row, a radix select of the k-th key, a gather in position order and a block sort
//     of the k (radix_select.cu).
// k > 2048 (radix select paths): the selection in position order, then the prim row sort (radix_sort::sort_rows).
// Every path is deterministic: the result is a function of the input (unique under the tie rule).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "prim/device/topk_rows/tuning_topk_rows.h"
#include "prim/util/key_codec.cuh"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace topk_rows {

// Top k of each row of x [rows, n] (rows >= 1, 1 <= k <= n) in final order: values [rows, k] (bit copies of x's
// elements) and indices (int64 positions in the row), the best first (a larger key under `codec` is better: the
// codec of largest = true is ascending, of largest = false descending), ties to the lower position.
// Instantiated in topk_rows.cu for Bits in {uint8, uint16, uint32, uint64}.
template <typename Bits>
void topk(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values, int64_t* indices,
          Workspace& workspace, cudaStream_t stream);

// ---- The paths, with topk's arguments; instantiated in their files for the same Bits.

// Whether the threshold filter takes rows of n keys of key_bytes bytes with this k (1 <= k <= n).
inline bool filter_topk_applies(int64_t n, int64_t k, size_t key_bytes) {
  return (key_bytes == 2 || key_bytes == 4) && k >= 1 && k <= Tuning::kFilterMaxK && n < (int64_t(1) << 32) - 1;
}
// The threshold filter (filter.cu), in final order; Bits uint16 or uint32.
template <typename Bits>
void filter_topk(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                 int64_t* indices, Workspace& workspace, cudaStream_t stream);

// k = 1 (arg_best.cu).
template <typename Bits>
void arg_best(const Bits* x, int64_t rows, int64_t n, KeyCodec<Bits> codec, Bits* values, int64_t* indices,
              Workspace& workspace, cudaStream_t stream);

// One block per row (radix_select.cu) or, for few long rows (multi_block_applies, row_select.cuh), several
// (multi_block.cu): in final order when k <= Tuning::kBlockSortMax; else in selection order, each row holding
// the elements strictly better than the k-th in position order, then those equal to it in position order.
template <typename Bits>
void radix_select(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                  int64_t* indices, cudaStream_t stream);
template <typename Bits>
void multi_block_select(const Bits* x, int64_t rows, int64_t n, int64_t k, KeyCodec<Bits> codec, Bits* values,
                        int64_t* indices, Workspace& workspace, cudaStream_t stream);

}  // namespace topk_rows
}  // namespace gpuprim
