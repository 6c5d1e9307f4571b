// ATen-free interface between moe_permute_cuda.cpp (glue) and moe_permute_cuda.cu (kernels).
#pragma once
#include <cstdint>

#include "prim/util/input_error.cuh"
#include "prim/util/stream.h"

namespace gpuprim {

// out[r] = hidden[token_ids[r]] (row_bytes bytes per row), zero where token_ids[r] is outside [0, tokens).
// hidden: [tokens, row_bytes]; out: [rows, row_bytes]; token_ids int64 [rows]. A dtype-free row copy.
// A token id outside [-1, tokens) gives a zero row and is recorded in token_ids_check.
void moe_permute_cuda_launch(const void* hidden, int64_t tokens, int64_t row_bytes, const int64_t* token_ids,
                             int64_t rows, const InputCheck& token_ids_check, void* out, cudaStream_t stream);

}  // namespace gpuprim
