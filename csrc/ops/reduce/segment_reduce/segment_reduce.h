// gpuprim::segment_reduce — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>

#include <vector>

#include "ops/reduce/segment_reduce/segment_reduce_launch.h"
#include "prim/util/input_error.cuh"

namespace gpuprim {

struct SegmentReduceArgs {
  int64_t dim;  // wrapped into [0, src.dim())
  Reduce reduce;
};

// Checks everything that can be checked without reading data (SymInt-safe: also used by the Meta kernels).
SegmentReduceArgs segment_reduce_check(const at::Tensor& src, const at::Tensor& offsets, c10::string_view reduce,
                                       int64_t dim);

// Also checks grad (the output's shape and dtype) and out (same) for the backward op.
SegmentReduceArgs segment_reduce_backward_check(const at::Tensor& grad, const at::Tensor& src,
                                                const at::Tensor& offsets, const at::Tensor& out,
                                                c10::string_view reduce, int64_t dim);

// src's sizes with sizes[dim] replaced by the number of segments, offsets.size(0) - 1.
std::vector<c10::SymInt> segment_reduce_out_sizes(const at::Tensor& src, const at::Tensor& offsets, int64_t dim);

// The rules only the data can break (torch's): offsets start at 0, never decrease and end at the length of src
// along dim (`rows`). Raises ValueError naming the first violation. Host data: the CPU kernels call it on every
// call (the CUDA kernels check while they read).
void segment_reduce_check_offsets(const std::vector<int64_t>& offsets, int64_t rows, InputOp op);

// [outer, rows, inner] view of a tensor of src's shape reduced along dim (int sizes: real tensors only).
SegmentShape segment_shape(const at::Tensor& src, const at::Tensor& offsets, int64_t dim);

}  // namespace gpuprim
