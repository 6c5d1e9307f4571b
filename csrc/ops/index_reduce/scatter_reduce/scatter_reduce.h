// gpuprim::scatter_reduce (and scatter_add = scatter_reduce(..., "sum", include_self=True)) — declarations shared
// by its CPU, CUDA, Meta and Autograd files. The kernels are index_add's engine (ops/index_add/index_add.h,
// prim/index_reduce.cuh) over flattened elements: item p of index goes to the linear offset in input of its
// coordinates with coordinate `dim` replaced by index[p].
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>
#include <torch/library.h>

#include <optional>

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

// A device's scatter_reduce kernel, out of place and in place; `op` is the public op the call came from.
using ScatterReduceKernel = at::Tensor (*)(const at::Tensor& input, int64_t dim, const at::Tensor& index,
                                           const at::Tensor& src, c10::string_view reduce, bool include_self,
                                           std::optional<bool> deterministic, InputOp op);
using ScatterReduceInPlaceKernel = void (*)(const at::Tensor& input, int64_t dim, const at::Tensor& index,
                                            const at::Tensor& src, c10::string_view reduce, bool include_self,
                                            std::optional<bool> deterministic, InputOp op);

// Registers scatter_reduce, scatter_reduce_, scatter_add and scatter_add_ for one dispatch key from its two
// kernels: scatter_add is scatter_reduce(..., reduce="sum", include_self=True) under its own name.
template <ScatterReduceKernel kOutOfPlace, ScatterReduceInPlaceKernel kInPlace>
void register_scatter_reduce_kernels(torch::Library& m) {
  m.impl("scatter_reduce", [](const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                              c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
    return kOutOfPlace(input, dim, index, src, reduce, include_self, deterministic, InputOp::kScatterReduce);
  });
  m.impl("scatter_reduce_", [](const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, bool include_self, std::optional<bool> deterministic) {
    kInPlace(input, dim, index, src, reduce, include_self, deterministic, InputOp::kScatterReduceInPlace);
  });
  m.impl("scatter_add", [](const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                           std::optional<bool> deterministic) {
    return kOutOfPlace(input, dim, index, src, "sum", true, deterministic, InputOp::kScatterAdd);
  });
  m.impl("scatter_add_", [](const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            std::optional<bool> deterministic) {
    kInPlace(input, dim, index, src, "sum", true, deterministic, InputOp::kScatterAddInPlace);
  });
}

}  // namespace gpuprim
