// Kernels of gpuprim::sum and gpuprim::mean: prim's exact sum (the CPU kernel's arithmetic, the same bits),
// per input type.
#include "ops/reduce/sum/sum_launch.h"
#include "prim/device/exact_sum/exact_sum.cuh"
#include "prim/util/dispatch.h"

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

}  // namespace gpuprim
