// The CSR rules of a row-offsets array checked on the device (bad input, prim/util/input_error.cuh): crow
// starts at 0, never decreases and ends at nnz. Kernels that walk a CSR structure clamp what they read
// (merge_path::clamped_offset) and report through this, one entry per thread, grid-stride.
#pragma once
#include <cstdint>

#include "prim/util/input_error.cuh"

namespace gpuprim {
namespace merge_path {

template <typename I>
__device__ __forceinline__ void check_crow_entry(const InputCheck& check, const I* crow, int64_t r, int64_t rows,
                                                 int64_t nnz) {
  const int64_t v = static_cast<int64_t>(crow[r]);
  const auto report = [&](InputRule rule, int64_t bound) {
    record_input_error(check.record, check.op, check.argument, r, v, rule, bound);
  };
  if (r == 0 && v != 0) {
    report(InputRule::kNonZeroStart, 0);
  } else if (r > 0 && v < static_cast<int64_t>(crow[r - 1])) {
    report(InputRule::kDecreasing, static_cast<int64_t>(crow[r - 1]));
  } else if (r == rows && v != nnz) {
    report(v > nnz ? InputRule::kPastEnd : InputRule::kNotAtEnd, nnz);
  }
}

// The row holding nonzero k: the last r < rows with crow[r] <= k (clamped offsets: always in [0, rows)).
template <typename I>
__device__ __forceinline__ int64_t row_of_nonzero(const I* crow, int64_t rows, int64_t nnz, int64_t k) {
  int64_t lo = 0, hi = rows - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    const int64_t v = static_cast<int64_t>(crow[mid]);
    if ((v < 0 ? 0 : (v > nnz ? nnz : v)) <= k) lo = mid; else hi = mid - 1;
  }
  return lo;
}

}  // namespace merge_path
}  // namespace gpuprim
