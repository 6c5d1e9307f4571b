#include "ops/cumsum/cumsum_launch.h"
#include "prim/scan.cuh"

namespace gpuprim {

namespace {
// Accumulator per input type: fp32 for 16-bit floats (the issue's contract), the type itself
// for fp32/fp64, int64 for every integer type (torch promotes integer cumsum to int64).
template <typename In> struct CumsumAcc { using type = int64_t; };
template <> struct CumsumAcc<__half> { using type = float; };
template <> struct CumsumAcc<__nv_bfloat16> { using type = float; };
template <> struct CumsumAcc<float> { using type = float; };
template <> struct CumsumAcc<double> { using type = double; };
template <typename In> struct CumsumOut { using type = int64_t; };
template <> struct CumsumOut<__half> { using type = __half; };
template <> struct CumsumOut<__nv_bfloat16> { using type = __nv_bfloat16; };
template <> struct CumsumOut<float> { using type = float; };
template <> struct CumsumOut<double> { using type = double; };
}  // namespace

void cumsum_cuda_launch(const void* in, DType in_type, void* out, int64_t outer, int64_t n,
                        int64_t inner, bool exclusive, bool reverse, Workspace& workspace, cudaStream_t stream) {
  GPUPRIM_DISPATCH_ALL("cumsum", in_type, [&] {
    using Acc = typename CumsumAcc<scalar_t>::type;
    using Out = typename CumsumOut<scalar_t>::type;
    scan::scan_launch<scalar_t, Acc, Out>(static_cast<const scalar_t*>(in), static_cast<Out*>(out),
                                          scan::Shape{outer, n, inner}, exclusive, reverse, workspace, stream);
  });
}

}  // namespace gpuprim
