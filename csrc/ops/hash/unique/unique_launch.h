// ATen-free interface between unique_cuda.cpp (glue) and unique_cuda.cu (kernels).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"

namespace gpuprim {

// torch.unique of x[0, n) in fixed-capacity outputs: values[capacity] (the distinct values ascending, then
// fill_bits; with `exact` the entries past num_unique may be left unwritten), counts[capacity] (then 0, likewise;
// may be null), inverse[n] (each element's rank among the distinct values;
// may be null) and *num_unique on the device (the true count, which may exceed capacity: the excess is dropped).
// Equality and order as in unique_cpu.cpp. No host sync, except with `exact` (the unsized form, which syncs
// anyway): then int32 / int64 inputs with few distinct values may take the hash path, which syncs once.
void unique_cuda_launch(const void* x, DType type, int64_t n, int64_t capacity, bool exact, uint64_t fill_bits,
                        void* values, int64_t* inverse, int64_t* counts, int64_t* num_unique, Workspace& workspace,
                        cudaStream_t stream);

// torch.unique(dim=) of the m slices rows[m, width] (contiguous: the glue moves dim to the front): values
// [capacity, width] (the distinct slices in lexicographic order, then fill_bits in every element), counts
// [capacity] (then 0; may be null), inverse [m] (each slice's rank; may be null) and *num_unique on the device (the
// true count; the excess is dropped). Equality and order as in unique_cpu.cpp. No host sync.
void unique_slices_cuda_launch(const void* rows, DType type, int64_t m, int64_t width, int64_t capacity,
                               uint64_t fill_bits, void* values, int64_t* inverse, int64_t* counts, int64_t* num_unique,
                               Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
