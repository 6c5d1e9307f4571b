// The values gradient of gpuprim::spmm (sum / mean): a dot product per nonzero, grad[row] . dense[col], a
// left-to-right fused multiply-add over the columns as the CPU kernel.
#include <cstdint>

#include "ops/graph/spmm/spmm_launch.h"
#include "prim/device/merge_path/csr_check.cuh"
#include "prim/device/merge_path/merge_path.h"
#include "prim/util/convert.cuh"
#include "prim/util/cuda_check.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/util/vec.cuh"

namespace gpuprim {
namespace {

constexpr int kThreads = kBlockThreads;

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    values_grad_kernel(const T* __restrict__ grad, const I* __restrict__ crow, const I* __restrict__ col,
                       const T* __restrict__ dense, SpmmShape shape, bool mean, InputCheck col_check,
                       T* __restrict__ grad_values) {
  using Acc = typename AccOf<T>::type;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < shape.nnz;
       k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = merge_path::row_of_nonzero(crow, shape.rows, shape.nnz, k);
    const int64_t c = static_cast<int64_t>(col[k]);
    Acc acc = Acc(0);
    if (c >= 0 && c < shape.cols) {
      for (int64_t f = 0; f < shape.features; ++f) {
        acc = fma(convert<Acc>(grad[r * shape.features + f]), convert<Acc>(dense[c * shape.features + f]), acc);
      }
      if (mean) {
        const int64_t count =
            merge_path::clamped_offset(crow, r + 1, shape.nnz) - merge_path::clamped_offset(crow, r, shape.nnz);
        acc = count > 0 ? acc / static_cast<Acc>(count) : acc;
      }
    } else {
      record_input_error(col_check, k, c);
    }
    grad_values[k] = convert<T>(acc);
  }
}

}  // namespace

void spmm_backward_cuda_launch(const void* grad, const void* crow, const void* col, DType index_type, const void* dense,
                               DType type, SpmmShape shape, Reduce reduce, const InputCheck& col_check,
                               void* grad_values, cudaStream_t stream) {
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
