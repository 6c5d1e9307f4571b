// The threshold-filter top-k (topk_filter_cuda.cu): one read of the input, for 16- and 32-bit
// keys, k <= kFilterMaxK and rows shorter than 2^32 - 1. ATen-free, included by topk_cuda.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "prim/util/workspace.h"
#include "prim/device/radix_sort/radix_sort.cuh"

namespace gpuprim {

constexpr int64_t kFilterMaxK = 1024;

// Whether filter_topk takes rows of n keys of key_bytes bytes with this k (1 <= k <= n).
inline bool filter_topk_applies(int64_t n, int64_t k, size_t key_bytes) {
  return (key_bytes == 2 || key_bytes == 4) && k >= 1 && k <= kFilterMaxK && n < (int64_t(1) << 32) - 1;
}

// Top k of each row of a contiguous [rows, n] array of keys, in final order (best first, ties by
// lower position), like topk_cuda_launch; `codec` makes a larger key the better element.
void filter_topk(const uint16_t* x, int64_t rows, int64_t n, int64_t k, radix_sort::KeyCodec<uint16_t> codec,
                 uint16_t* values, int64_t* indices, Workspace& workspace, cudaStream_t stream);
void filter_topk(const uint32_t* x, int64_t rows, int64_t n, int64_t k, radix_sort::KeyCodec<uint32_t> codec,
                 uint32_t* values, int64_t* indices, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
