// GPUPRIM_HD: a function compiled for the host and, under nvcc, for the device too, so one definition
// serves a CPU kernel and a CUDA kernel (prim/exact_sum.h, prim/index_reduce_common.h).
#pragma once

#if defined(__CUDACC__)
#define GPUPRIM_HD __host__ __device__ __forceinline__
#else
#define GPUPRIM_HD inline
#endif
