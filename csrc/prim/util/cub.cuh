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

namespace gpuprim {
namespace cub = CUB_NS_QUALIFIER;
}  // namespace gpuprim
