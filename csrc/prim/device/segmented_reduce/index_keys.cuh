// Radix-sort keys from an index: the entries in [0, rows) keep their value, every other one becomes rows (sorted
// last, so a sorted run of valid keys ends where the sentinel begins) and is reported once.
#pragma once
#include <cstdint>

#include "prim/util/input_error.cuh"
#include "prim/util/launch.h"

namespace gpuprim {
namespace segmented {

// How bad indices are reported: `check` (its record may be null), and the values to report, when the index the
// kernels read is not the user's (scatter's destinations; nullptr: the index itself).
struct IndexErrors {
  InputCheck check;
  const int64_t* user_values;
};

__device__ __forceinline__ void report_bad_index(const IndexErrors& errors, int64_t i, int64_t value) {
  record_input_error(errors.check, i, errors.user_values ? errors.user_values[i] : value);
}

// keys[i] = index[i] when it lies in [0, rows), else rows (the sentinel, sorted last); positions[i] = i.
template <typename Index, typename Key, typename Pos>
__global__ void __launch_bounds__(kBlockThreads) make_keys_kernel(const Index* __restrict__ index, int64_t n,
                                                                  int64_t rows, IndexErrors errors,
                                                                  Key* __restrict__ keys,
                                                                  Pos* __restrict__ positions) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = static_cast<int64_t>(index[i]);
    const bool valid = r >= 0 && r < rows;
    if (!valid) report_bad_index(errors, i, r);
    keys[i] = static_cast<Key>(valid ? r : rows);
    positions[i] = static_cast<Pos>(i);
  }
}

}  // namespace segmented
}  // namespace gpuprim
