// Shared ATen-side helpers: argument checks with gpuprim's error format, dtype mapping,
// and the determinism default. Included by *_cpu.cpp, *_cuda.cpp, *_meta.cpp, *_autograd.cpp.
#pragma once
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <optional>

#include "prim/util/dtype.h"

// Argument checks with the project's message shape:
//   gpuprim.<op>: <argument> must be <rule>, got <value>
// raising ValueError (bad value or shape), TypeError (bad dtype) or IndexError (bad dim) in Python.
#define GPUPRIM_CHECK_ARG(cond, op, arg, rule, value) \
  TORCH_CHECK_VALUE((cond), "gpuprim.", op, ": ", arg, " must be ", rule, ", got ", value)
#define GPUPRIM_CHECK_DTYPE(cond, op, arg, rule, value) \
  TORCH_CHECK_TYPE((cond), "gpuprim.", op, ": ", arg, " must be ", rule, ", got ", value)
#define GPUPRIM_CHECK_INDEX(cond, op, arg, rule, value) \
  TORCH_CHECK_INDEX((cond), "gpuprim.", op, ": ", arg, " must be ", rule, ", got ", value)

namespace gpuprim {

DType to_dtype(at::ScalarType type);

// Wraps a possibly negative dim into [0, ndim); a 0-d tensor accepts dim in {-1, 0}.
int64_t wrap_dim(const char* op, const char* arg, int64_t dim, int64_t ndim);

// The `deterministic` schema argument: an explicit bool wins, None follows
// torch.use_deterministic_algorithms (at::globalContext()), as the C++ API promises.
inline bool resolve_deterministic(std::optional<bool> deterministic) {
  return deterministic.value_or(at::globalContext().deterministicAlgorithms());
}

// A Scalar argument as a 0-d CPU tensor of `type` (torch's conversion, so 1.5 becomes 1 in an integer dtype); a
// value the dtype cannot hold raises ValueError naming `arg` and where the dtype comes from (`type_source`).
at::Tensor scalar_of_dtype(const char* op, const char* arg, const c10::Scalar& value, at::ScalarType type,
                           const char* type_source);

// That tensor's bits, in the low bytes of a uint64 (what kernels take as a fill or default value).
uint64_t scalar_bits(const char* op, const char* arg, const c10::Scalar& value, at::ScalarType type,
                     const char* type_source);

// Every tensor argument of an op must live on the device of its first input.
void check_same_device(const char* op, const at::Tensor& first, const char* arg, const at::Tensor& other);

}  // namespace gpuprim
