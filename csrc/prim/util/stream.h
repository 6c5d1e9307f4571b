// cudaStream_t exactly as CUDA's driver_types.h declares it, for the launcher headers that CPU kernels include
// too (through <op>.h): a CPU-only build has no CUDA headers.
#pragma once

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
