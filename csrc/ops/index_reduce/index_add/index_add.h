// gpuprim::index_add — declarations shared by its CPU, CUDA, Meta and Autograd files, and the CPU engine
// that gpuprim::scatter_reduce reuses (its folder is built together with this one).
#pragma once
#include <ATen/ATen.h>

#include "ops/index_reduce/index_add/index_add_launch.h"
#include "prim/util/input_error.cuh"

namespace gpuprim {

// Checks everything that can be checked without reading data (SymInt-safe: also used by the Meta kernel);
// returns dim wrapped into [0, max(input.dim(), 1)).
int64_t index_add_check(const at::Tensor& input, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                        const c10::Scalar& alpha);

// [outer, items, rows, inner] view of index_add's tensors (int sizes: real tensors only).
IndexReduceShape index_add_shape(const at::Tensor& input, int64_t dim, const at::Tensor& index);

// Dtypes the index reductions accept for input/src: bool, uint8, int8, int16, int32, int64, float16, bfloat16,
// float32, float64.
bool index_reduce_dtype_ok(at::ScalarType type);

// Bool tensors reduce as their uint8 bytes (0 or 1), as torch's bool reductions do: a sum saturates (a
// logical or: max), amax is or, amin and prod are and (min).
Reduce bool_reduce(Reduce reduce);
// A bool index_add adds `source * alpha`: all false when alpha is false (0, 0.0 or False).
inline bool alpha_is_true(const c10::Scalar& alpha) {
  return alpha.isBoolean() ? alpha.toBool() : alpha.isIntegral(false) ? alpha.toLong() != 0 : alpha.toDouble() != 0;
}
inline at::Tensor bool_as_bytes(const at::Tensor& t) { return t.scalar_type() == at::kBool ? t.view(at::kByte) : t; }

// CPU engine of every index reduction: out (contiguous [outer, rows, inner], holding self) receives the
// reduction of src (contiguous [outer, items, inner]) rows by index (int32/int64 [items], every value already
// checked to lie in [0, rows)), in item order, finalized as prim/index_reduce_common.h says. Bool: as bytes,
// with bool_reduce (alpha is then ignored: index_add skips the call for a false alpha).
void index_reduce_cpu_kernel(const at::Tensor& index, const at::Tensor& src, const IndexReduceShape& shape,
                             Reduce reduce, bool include_self, const c10::Scalar& alpha, at::Tensor& out);

// Raises IndexError ("gpuprim.<op>: index[p] = v is out of range for dimension <dim> of size <rows>") at the
// first value of index outside [0, rows). Host data: the CPU kernels call it on every call.
void check_index_range(InputOp op, const at::Tensor& index, int64_t rows, int64_t dim);

// The checks index_add and scatter_reduce share, in order: source of input's dtype, index int32/int64, both on
// input's device. `source_name`: source's argument name in messages.
void check_index_reduce_operands(const char* op, const at::Tensor& input, const at::Tensor& index,
                                 const at::Tensor& source, const char* source_name);

// An index reduction in place: into(out) reduces into out (contiguous, holding input's values, not overlapping
// index or source); out is input itself when it is contiguous and shares no memory with them, else a temporary
// copied back.
template <typename Into>
void index_reduce_in_place(const at::Tensor& input, const at::Tensor& index, const at::Tensor& source, Into&& into) {
  at::Tensor self = input;
  if (input.is_contiguous() && !input.is_alias_of(source) && !input.is_alias_of(index)) {
    into(self);
  } else {
    at::Tensor out = input.clone(at::MemoryFormat::Contiguous);
    into(out);
    self.copy_(out);
  }
}

}  // namespace gpuprim
