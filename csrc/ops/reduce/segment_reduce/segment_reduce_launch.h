// ATen-free interface between segment_reduce_cuda.cpp (glue) and segment_reduce_cuda.cu (kernels).
#pragma once
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"
#include "prim/device/segmented_reduce/reducers.h"
#include "prim/device/segmented_reduce/segment_offsets.h"
#include "prim/util/input_error.cuh"
#include "prim/util/stream.h"

namespace gpuprim {

// src is viewed as a contiguous [outer, rows, inner] tensor reduced along rows into [outer, segments, inner].
struct SegmentShape {
  int64_t outer, rows, inner, segments;
};

// out[o, s, :] = reduce(src[o, lo(s):hi(s), :]) for every segment; empty segments give 0.
// offsets: int64 [segments + 1] on the device; offsets that break the CSR rules (start at 0, non-decreasing,
// end at rows) are clamped and recorded through `check`. Floating dtypes only; fp16/bf16 accumulate in fp32.
void segment_reduce_cuda_launch(const void* src, DType type, const int64_t* offsets, SegmentShape shape,
                                Reduce reduce, const InputCheck& check, void* out, Workspace& workspace,
                                cudaStream_t stream);

// grad_src [outer, rows, inner] from grad [outer, segments, inner] (dtype `type`). For kMax/kMin, grad_src
// must be zero on entry and `out` is the forward result; for kSum/kMean every element is written.
void segment_reduce_backward_cuda_launch(const void* grad, const void* src, const void* out, DType type,
                                         const int64_t* offsets, SegmentShape shape, Reduce reduce,
                                         const InputCheck& check, void* grad_src, Workspace& workspace,
                                         cudaStream_t stream);

}  // namespace gpuprim
