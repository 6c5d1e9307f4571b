// gpuprim::scatter_reduce (and scatter_add = scatter_reduce(..., "sum", include_self=True)) — declarations shared
// by its CPU, CUDA, Meta and Autograd files. The kernels are index_add's engine (ops/index_add/index_add.h,
// prim/index_reduce.cuh) over flattened elements: item p of index goes to the linear offset in input of its
// coordinates with coordinate `dim` replaced by index[p].
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>

#include "ops/index_reduce/index_add/index_add.h"

namespace gpuprim {

struct ScatterReduceArgs {
  int64_t dim;  // wrapped into [0, max(input.dim(), 1))
  Reduce reduce;
};

// Checks everything that can be checked without reading data (SymInt-safe: also used by the Meta kernel).
// `op`: the public name in messages (scatter_add runs scatter_reduce's kernels under its own name).
ScatterReduceArgs scatter_reduce_check(const at::Tensor& input, int64_t dim, const at::Tensor& index,
                                       const at::Tensor& src, c10::string_view reduce,
                                       const char* op = "scatter_reduce");

// int64 [index.numel()]: the linear offset in (contiguous) input that each element of index points at, or -1
// where index is outside [0, input.size(dim)).
at::Tensor scatter_destinations(const at::Tensor& input, int64_t dim, const at::Tensor& index);

// src restricted to index's shape (src[:index.size(0), :index.size(1), ...]), contiguous.
at::Tensor scatter_source(const at::Tensor& src, const at::Tensor& index);

}  // namespace gpuprim
