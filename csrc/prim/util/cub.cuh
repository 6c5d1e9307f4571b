// CUB, wrapped in gpuprim's own namespace (CUB_WRAPPED_NAMESPACE=gpuprim_cub is set by CMake
// for every .cu file) so its symbols never collide with the CUB copy inside libtorch_cuda.
#pragma once
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cstddef>

#include "prim/util/cuda_check.h"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace cub = CUB_NS_QUALIFIER;

// CUB's two-call temp-storage pattern in one place: call(nullptr, bytes) sizes the temp storage, the
// workspace provides it, call(temp, bytes) runs. `call` returns CUB's cudaError_t.
template <typename Call>
void cub_call(Workspace& workspace, Call&& call) {
  size_t bytes = 0;
  GPUPRIM_CUDA_CHECK(call(nullptr, bytes));
  void* temp = workspace.allocate(std::max<size_t>(bytes, 1));
  GPUPRIM_CUDA_CHECK(call(temp, bytes));
}

}  // namespace gpuprim
