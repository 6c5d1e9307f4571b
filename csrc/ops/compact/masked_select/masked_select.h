// gpuprim::masked_select's device-independent part, used by its CPU and CUDA kernels.
#pragma once
#include <ATen/ATen.h>

#include <utility>

namespace gpuprim {

// compact's checks of x and mask, with x and mask broadcast to their common shape (torch.broadcast_tensors,
// as torch.masked_select does): views, to make contiguous.
std::pair<at::Tensor, at::Tensor> masked_select_broadcast(const at::Tensor& x, const at::Tensor& mask);

}  // namespace gpuprim
