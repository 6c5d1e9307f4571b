// Launchers of gpuprim::spmm: a merge-path walk over rows + nonzeros (prim/device/merge_path), each tile
// walked by a group of lanes spanning the feature columns, and a fix-up pass for rows cut by tile
// boundaries; plus the values gradient (a dot product per nonzero).
//
//   coords_kernel   the merge-path coordinate of every tile boundary
//   tile_kernel     rows that end in a tile and began in it are stored; the piece of the row open at the
//                   tile's end is stored as the tile's carry
//   fixup_kernel    a row that began in an earlier tile is finished by the tile where it ends: its earlier
//                   pieces (carries, in tile order) then its own last piece, folded left to right
// No float atomics: bitwise reproducible, and equal to the CPU kernel (same pieces, same fused multiply-adds).
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ops/graph/spmm/spmm_launch.h"
#include "prim/device/merge_path/csr_check.cuh"
#include "prim/device/merge_path/merge_path.h"
#include "prim/device/merge_path/tuning_merge_path.h"
#include "prim/util/convert.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace {

using merge_path::Coord;
constexpr int kThreads = merge_path::MergePathTuning::kThreads;

// Lanes per tile and columns per lane load: a fixed layout per launch.
struct Layout {
  int group;          // lanes per tile (power of two, <= 32)
  int64_t col_tiles;  // column passes of group * Vec columns
};

// acc <- acc (+) value * weight in the op's order: a fused multiply-add for sums (the CPU uses std::fma).
template <Reduce R, typename Acc>
__device__ __forceinline__ Acc accumulate(Acc acc, Acc value, Acc weight, bool weighted) {
  if constexpr (R == Reduce::kSum) {
    return weighted ? fma(weight, value, acc) : acc + value;
  } else {
    const Acc product = weighted ? weight * value : value;
    return reducers::Op<R>::combine(acc, product);
  }
}

// The piece [begin, end) of one row, folded left to right from the identity, Vec columns at `column`.
template <typename T, typename I, Reduce R, int Vec>
__device__ __forceinline__ void fold_piece(const I* col, const T* values, const T* dense, const SpmmShape& shape,
                                           const InputCheck& col_check, int64_t column, int64_t begin, int64_t end,
                                           typename AccOf<T>::type (&acc)[Vec]) {
  using Acc = typename AccOf<T>::type;
#pragma unroll
  for (int v = 0; v < Vec; ++v) acc[v] = reducers::Op<R>::template identity<Acc>();
  for (int64_t k = begin; k < end; ++k) {
    const int64_t c = static_cast<int64_t>(col[k]);
    if (c < 0 || c >= shape.cols) {
      if (column == 0) record_input_error(col_check, k, c);
      continue;
    }
    const Acc weight = values != nullptr ? convert<Acc>(values[k]) : Acc(1);
    const VecOf<Vec, T> x = load_vec<Vec>(dense + c * shape.features + column);
#pragma unroll
    for (int v = 0; v < Vec; ++v) acc[v] = accumulate<R>(acc[v], convert<Acc>(x.items[v]), weight, values != nullptr);
  }
}

template <typename T, int Vec>
__device__ __forceinline__ void store_row(T* out, const typename AccOf<T>::type (&acc)[Vec], int64_t count,
                                          bool mean) {
  VecOf<Vec, T> y;
#pragma unroll
  for (int v = 0; v < Vec; ++v) y.items[v] = convert<T>(reducers::segment_value(mean, acc[v], count));
  store_vec<Vec>(out, y);
}

// Every (tile, column) work item of the grid, a group of layout.group lanes a tile, Vec columns a lane:
// body(tile, column, first, last) with the tile's merge-path bounds; no barriers or shuffles inside.
template <int Vec, typename Body>
__device__ __forceinline__ void for_each_tile_column(const Coord* __restrict__ coords, int64_t tiles,
                                                     const Layout& layout, int64_t features, Body&& body) {
  const int lane = threadIdx.x % layout.group;
  const int64_t groups = int64_t(gridDim.x) * (kThreads / layout.group);
  for (int64_t w = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / layout.group; w < tiles * layout.col_tiles;
       w += groups) {
    const int64_t column = ((w % layout.col_tiles) * layout.group + lane) * Vec;
    if (column >= features) continue;
    const int64_t tile = w / layout.col_tiles;
    body(tile, column, coords[tile], coords[tile + 1]);
  }
}

template <typename I>
__global__ void __launch_bounds__(kThreads) coords_kernel(const I* __restrict__ crow, SpmmShape shape,
                                                          int64_t items, int64_t tiles, InputCheck crow_check,
                                                          Coord* __restrict__ coords) {
  const int64_t total = shape.rows + shape.nnz;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t <= tiles; t += int64_t(gridDim.x) * blockDim.x) {
    coords[t] = merge_path::search(std::min(t * items, total), crow, shape.rows, shape.nnz);
  }
  // The CSR rules of crow, each entry checked once (the walks clamp whatever they read).
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= shape.rows;
       r += int64_t(gridDim.x) * blockDim.x) {
    merge_path::check_crow_entry(crow_check, crow, r, shape.rows, shape.nnz);
  }
}

template <typename T, typename I, Reduce R, int Vec>
__global__ void __launch_bounds__(kThreads) tile_kernel(const I* __restrict__ crow, const I* __restrict__ col,
                                                        const T* __restrict__ values, const T* __restrict__ dense,
                                                        SpmmShape shape, const Coord* __restrict__ coords,
                                                        int64_t tiles, Layout layout, bool mean,
                                                        InputCheck col_check, T* __restrict__ out,
                                                        typename AccOf<T>::type* __restrict__ carries) {
  using Acc = typename AccOf<T>::type;
  for_each_tile_column<Vec>(coords, tiles, layout, shape.features, [&](int64_t tile, int64_t column, Coord first,
                                                                       Coord last) {
    int64_t j = first.nz;
    for (int64_t r = first.row; r <= last.row && r < shape.rows; ++r) {
      const bool ends = r < last.row;
      const int64_t row_begin = merge_path::clamped_offset(crow, r, shape.nnz);
      const int64_t end = ends ? std::min(std::max(merge_path::clamped_offset(crow, r + 1, shape.nnz), j), last.nz)
                                : last.nz;
      const bool began_before = r == first.row && first.nz > row_begin;
      if (ends && began_before) {  // finished by fixup_kernel, in tile order
        j = end;
        continue;
      }
      Acc acc[Vec];
      fold_piece<T, I, R, Vec>(col, values, dense, shape, col_check, column, j, end, acc);
      if (ends) {
        store_row<T, Vec>(out + r * shape.features + column, acc, end - row_begin, mean);
      } else {
#pragma unroll
        for (int v = 0; v < Vec; ++v) carries[tile * shape.features + column + v] = acc[v];
      }
      j = end;
    }
  });
}

template <typename T, typename I, Reduce R, int Vec>
__global__ void __launch_bounds__(kThreads) fixup_kernel(const I* __restrict__ crow, const I* __restrict__ col,
                                                         const T* __restrict__ values, const T* __restrict__ dense,
                                                         SpmmShape shape, const Coord* __restrict__ coords,
                                                         int64_t tiles, Layout layout, bool mean,
                                                         InputCheck col_check,
                                                         const typename AccOf<T>::type* __restrict__ carries,
                                                         T* __restrict__ out) {
  using Acc = typename AccOf<T>::type;
  for_each_tile_column<Vec>(coords, tiles, layout, shape.features, [&](int64_t tile, int64_t column, Coord first,
                                                                       Coord last) {
    const int64_t r = first.row;
    if (r >= last.row || r >= shape.rows) return;  // the tile ends no row
    const int64_t row_begin = merge_path::clamped_offset(crow, r, shape.nnz);
    if (first.nz <= row_begin) return;  // the row began in this tile: stored by tile_kernel
    // The tiles s .. tile-1 that end inside row r: s is the first tile whose end row is r (binary search: a
    // row of millions of nonzeros spans many tiles).
    int64_t lo = 1, hi = tile;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (coords[mid].row < r) lo = mid + 1; else hi = mid;
    }
    int64_t s = lo - 1;
    Acc total[Vec];
    bool any = false;
    const auto fold = [&](const Acc (&piece)[Vec]) {
#pragma unroll
      for (int v = 0; v < Vec; ++v) total[v] = any ? accumulate<R>(total[v], piece[v], Acc(1), false) : piece[v];
      any = true;
    };
    for (; s < tile; ++s) {
      if (coords[s + 1].nz <= std::max(coords[s].nz, row_begin)) continue;  // an empty piece
      Acc piece[Vec];
#pragma unroll
      for (int v = 0; v < Vec; ++v) piece[v] = carries[s * shape.features + column + v];
      fold(piece);
    }
    const int64_t end = std::max(merge_path::clamped_offset(crow, r + 1, shape.nnz), first.nz);
    if (end > first.nz) {
      Acc piece[Vec];
      fold_piece<T, I, R, Vec>(col, values, dense, shape, col_check, column, first.nz, std::min(end, last.nz), piece);
      fold(piece);
    }
    if (!any) {
#pragma unroll
      for (int v = 0; v < Vec; ++v) total[v] = Acc(0);
    }
    store_row<T, Vec>(out + r * shape.features + column, total, end - row_begin, mean);
  });
}

// Widest load (16 bytes at most) that divides the row length and suits both row pointers; only 1 or the
// widest are instantiated, to keep compile time down.
template <typename T>
int vector_width(int64_t features, const void* dense, const void* out) {
  constexpr int widest = 16 / sizeof(T);
  return features % widest == 0 && aligned(dense, 16) && aligned(out, 16) ? widest : 1;
}

template <typename T, typename I, Reduce R, int Vec>
void run(const I* crow, const I* col, const T* values, const T* dense, const SpmmShape& shape, bool mean,
         const InputCheck& crow_check, const InputCheck& col_check, T* out, Workspace& workspace,
         cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  const int64_t items = merge_path::tile_items(shape.features);
  const int64_t tiles = merge_path::tile_count(shape.rows, shape.nnz, items);
  auto* coords = static_cast<Coord*>(workspace.allocate(sizeof(Coord) * (tiles + 1)));
  coords_kernel<I><<<grid_for(std::max(tiles + 1, shape.rows + 1), kThreads), kThreads, 0, stream>>>(
      crow, shape, items, tiles, crow_check, coords);
  GPUPRIM_LAUNCH_CHECK();
  auto* carries = static_cast<Acc*>(workspace.allocate(sizeof(Acc) * tiles * shape.features));
  const int64_t column_vectors = shape.features / Vec;
  int group = 1;
  while (group < column_vectors && group < kWarpSize) group *= 2;
  const Layout layout{group, (column_vectors + group - 1) / group};
  const int64_t work = tiles * layout.col_tiles;
  const int64_t per_block = kThreads / group;
  auto tile = tile_kernel<T, I, R, Vec>;
  tile<<<grid_for(work, per_block, resident_blocks(tile, kThreads)), kThreads, 0, stream>>>(
      crow, col, values, dense, shape, coords, tiles, layout, mean, col_check, out, carries);
  GPUPRIM_LAUNCH_CHECK();
  auto fixup = fixup_kernel<T, I, R, Vec>;
  fixup<<<grid_for(work, per_block, resident_blocks(fixup, kThreads)), kThreads, 0, stream>>>(
      crow, col, values, dense, shape, coords, tiles, layout, mean, col_check, carries, out);
  GPUPRIM_LAUNCH_CHECK();
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) values_grad_kernel(const T* __restrict__ grad, const I* __restrict__ crow,
                                                               const I* __restrict__ col, const T* __restrict__ dense,
                                                               SpmmShape shape, bool mean, InputCheck col_check,
                                                               T* __restrict__ grad_values) {
  using Acc = typename AccOf<T>::type;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < shape.nnz; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = merge_path::row_of_nonzero(crow, shape.rows, shape.nnz, k);
    const int64_t c = static_cast<int64_t>(col[k]);
    Acc acc = Acc(0);
    if (c >= 0 && c < shape.cols) {
      for (int64_t f = 0; f < shape.features; ++f) {
        acc = fma(convert<Acc>(grad[r * shape.features + f]), convert<Acc>(dense[c * shape.features + f]), acc);
      }
      if (mean) {
        const int64_t count = merge_path::clamped_offset(crow, r + 1, shape.nnz) -
                              merge_path::clamped_offset(crow, r, shape.nnz);
        acc = count > 0 ? acc / static_cast<Acc>(count) : acc;
      }
    } else {
      record_input_error(col_check, k, c);
    }
    grad_values[k] = convert<T>(acc);
  }
}

}  // namespace

void spmm_cuda_launch(const void* crow, const void* col, DType index_type, const void* values, const void* dense,
                      DType type, SpmmShape shape, Reduce reduce, const InputCheck& crow_check,
                      const InputCheck& col_check, void* out, Workspace& workspace, cudaStream_t stream) {
  if (shape.rows == 0 || shape.features == 0) return;
  dispatch<FloatingTypes>("spmm", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch<IndexTypes>("spmm", index_type, [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      const auto go = [&](auto op_tag, auto vec_tag) {
        constexpr Reduce R = decltype(op_tag)::value;
        constexpr int Vec = decltype(vec_tag)::value;
        run<T, I, R, Vec>(static_cast<const I*>(crow), static_cast<const I*>(col), static_cast<const T*>(values),
                          static_cast<const T*>(dense), shape, reduce == Reduce::kMean, crow_check, col_check,
                          static_cast<T*>(out), workspace, stream);
      };
      const auto with_op = [&](auto vec_tag) {
        if (reduce == Reduce::kMax) go(std::integral_constant<Reduce, Reduce::kMax>{}, vec_tag);
        else if (reduce == Reduce::kMin) go(std::integral_constant<Reduce, Reduce::kMin>{}, vec_tag);
        else go(std::integral_constant<Reduce, Reduce::kSum>{}, vec_tag);
      };
      constexpr int kWidest = 16 / sizeof(T);
      if (vector_width<T>(shape.features, dense, out) == kWidest) {
        with_op(std::integral_constant<int, kWidest>{});
      } else {
        with_op(std::integral_constant<int, 1>{});
      }
    });
  });
}

void spmm_backward_cuda_launch(const void* grad, const void* crow, const void* col, DType index_type,
                               const void* dense, DType type, SpmmShape shape, Reduce reduce,
                               const InputCheck& col_check, void* grad_values, cudaStream_t stream) {
  if (shape.nnz == 0 || shape.rows == 0) return;  // the glue zero-fills (rows == 0 with nonzeros: bad crow)
  dispatch<FloatingTypes>("spmm", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch<IndexTypes>("spmm", index_type, [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      values_grad_kernel<T, I><<<grid_for(shape.nnz, kThreads), kThreads, 0, stream>>>(
          static_cast<const T*>(grad), static_cast<const I*>(crow), static_cast<const I*>(col),
          static_cast<const T*>(dense), shape, reduce == Reduce::kMean, col_check, static_cast<T*>(grad_values));
      GPUPRIM_LAUNCH_CHECK();
    });
  });
}

}  // namespace gpuprim
