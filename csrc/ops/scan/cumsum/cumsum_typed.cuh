// cumsum's per-input-type entry point. Its explicit instantiations are spread over several .cu
// files (cumsum_*_cuda.cu) so that nvcc compiles them in parallel: one file for all ten types
// took minutes on one core.
#pragma once
#include "prim/device/scan/scan.cuh"

namespace gpuprim {

// Accumulator per input type: fp32 for 16-bit floats (the op's contract), the type itself
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

template <typename In>
void cumsum_typed(const In* in, void* out, scan::Shape shape, bool exclusive, bool reverse,
                  scan::Algorithm algorithm, Workspace& workspace, cudaStream_t stream) {
  using Acc = typename CumsumAcc<In>::type;
  using Out = typename CumsumOut<In>::type;
  scan::scan_launch<In, Acc, Out>(in, static_cast<Out*>(out), shape, exclusive, reverse, workspace, stream,
                                  algorithm);
}

#define GPUPRIM_CUMSUM_INSTANTIATE(In)                                                                       \
  template void cumsum_typed<In>(const In*, void*, scan::Shape, bool, bool, scan::Algorithm, Workspace&,     \
                                 cudaStream_t)
// Every other file sees them as extern, so the dispatcher in cumsum_cuda.cu compiles no kernels.
#define GPUPRIM_CUMSUM_EXTERN(In)                                                                            \
  extern template void cumsum_typed<In>(const In*, void*, scan::Shape, bool, bool, scan::Algorithm,          \
                                        Workspace&, cudaStream_t)
GPUPRIM_CUMSUM_EXTERN(float);
GPUPRIM_CUMSUM_EXTERN(double);
GPUPRIM_CUMSUM_EXTERN(__half);
GPUPRIM_CUMSUM_EXTERN(__nv_bfloat16);
GPUPRIM_CUMSUM_EXTERN(bool);
GPUPRIM_CUMSUM_EXTERN(uint8_t);
GPUPRIM_CUMSUM_EXTERN(int8_t);
GPUPRIM_CUMSUM_EXTERN(int16_t);
GPUPRIM_CUMSUM_EXTERN(int32_t);
GPUPRIM_CUMSUM_EXTERN(int64_t);

}  // namespace gpuprim
