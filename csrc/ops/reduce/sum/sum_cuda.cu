// Kernels of gpuprim::sum and gpuprim::mean: prim's exact sum (the CPU kernel's arithmetic, the same bits),
// per input type.
#include "ops/reduce/sum/sum_launch.h"
#include "prim/device/exact_sum/exact_sum.cuh"
#include "prim/util/cub.cuh"
#include "prim/util/dispatch.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>

namespace gpuprim {

void sum_cuda_launch(const void* x, DType in_type, void* out, DType out_type, int64_t rows, int64_t cols, bool mean,
                     int64_t blocks, int64_t threads, Workspace& workspace, cudaStream_t stream) {
  dispatch<FloatingTypes>("sum", in_type, [&](auto tag) {
    using In = typename decltype(tag)::type;
    exact_sum::sum_rows<In>(static_cast<const In*>(x), rows, cols, mean, out_type, out, blocks, threads, workspace,
                            stream);
  });
}

void sum_cuda_launch_columns(const void* x, DType in_type, void* out, DType out_type, int64_t outer, int64_t n,
                             int64_t inner, bool mean, int64_t blocks, int64_t threads, Workspace& workspace,
                             cudaStream_t stream) {
  dispatch<FloatingTypes>("sum", in_type, [&](auto tag) {
    using In = typename decltype(tag)::type;
    exact_sum::sum_columns<In>(static_cast<const In*>(x), outer, n, inner, mean, out_type, out, blocks, threads,
                               workspace, stream);
  });
}

using IntegerTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t>;

void sum_cuda_launch_integer(const void* x, DType in_type, int64_t* out, int64_t rows, int64_t cols,
                             const int64_t* offsets, Workspace& workspace, cudaStream_t stream) {
  dispatch<IntegerTypes>("sum", in_type, [&](auto tag) {
    using In = typename decltype(tag)::type;
    const In* in = static_cast<const In*>(x);
    // An int64 init makes CUB accumulate in int64 (integer sums are exact in any order).
    const auto op = ::cuda::std::plus<int64_t>{};
    if (rows == 1) {
      cub_call(workspace, [&](void* temp, size_t& bytes) {
        return cub::DeviceReduce::Reduce(temp, bytes, in, out, cols, op, int64_t(0), stream);
      });
      return;
    }
    cub_call(workspace, [&](void* temp, size_t& bytes) {
      return cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, out, rows, offsets, offsets + 1,
                                                op, int64_t(0), stream);
    });
  });
}

}  // namespace gpuprim
