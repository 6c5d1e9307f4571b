// gpuprim::moe_permute — declarations shared by its CPU, CUDA, Meta and Autograd files.
#pragma once
#include <ATen/ATen.h>

namespace gpuprim {

// Checks hidden [T, H] (floating), token_ids int64 [R], slots int64 [T, k] (SymInt-safe).
void moe_permute_check(const at::Tensor& hidden, const at::Tensor& token_ids, const at::Tensor& slots);

}  // namespace gpuprim
