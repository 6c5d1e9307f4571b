// gpuprim::sort_values — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Whether a contiguous row of n elements of `type` takes the keys-only radix sort on CUDA (int32 and int64:
// equal keys are equal bits, so no positions need carrying; n <= INT32_MAX for CUB's 32-bit offsets).
// Everything else is gpuprim::sort's values (floats: -0.0 / +0.0 and NaN payloads keep their input order).
bool sort_values_keys_only(at::ScalarType type, int64_t n);

}  // namespace gpuprim
