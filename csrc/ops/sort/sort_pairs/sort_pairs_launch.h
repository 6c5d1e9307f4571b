// ATen-free interface between sort_pairs_cuda.cpp (glue) and sort_pairs_cuda.cu (the CUB call per width).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/workspace.h"

namespace gpuprim {

// Stable ascending sort of n (key, value) pairs by the key bits [0, end_bit), straight from the
// inputs to the outputs (CUB reads keys_in on its first pass: no encode pass). key_bytes 4 or 8
// (signed integers, ordered as signed), value_bytes 4 or 8 (moved as raw bits), n <= INT32_MAX.
void sort_pairs_cuda_launch(const void* keys_in, void* keys_out, int key_bytes, const void* values_in,
                            void* values_out, int value_bytes, int64_t n, int end_bit, Workspace& workspace,
                            cudaStream_t stream);

}  // namespace gpuprim
