// Host side of prim/dependent_launch.cuh: which kernels carry sm_90+ code on which device.
#include <map>
#include <mutex>
#include <utility>

#include "prim/util/cuda_check.h"
#include "prim/util/dependent_launch.cuh"

namespace gpuprim {
namespace pdl {

bool has_dependent_launch(const void* kernel) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, bool> known;
  int device = 0;
  GPUPRIM_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(kernel, device);
  const auto found = known.find(key);
  if (found != known.end()) return found->second;
  cudaFuncAttributes attributes{};
  GPUPRIM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  return known[key] = attributes.binaryVersion >= 90;
}

}  // namespace pdl
}  // namespace gpuprim
