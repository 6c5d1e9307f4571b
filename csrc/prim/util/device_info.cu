#include "prim/util/device_info.h"
#include "prim/util/cuda_check.h"

#include <mutex>
#include <vector>

namespace gpuprim {

const DeviceInfo& current_device_info() {
  static std::mutex mutex;
  static std::vector<DeviceInfo*> cache;
  int device = 0;
  GPUPRIM_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() <= static_cast<size_t>(device)) cache.resize(device + 1, nullptr);
  if (!cache[device]) {
    auto* info = new DeviceInfo{};  // lives for the process, like the device itself
    GPUPRIM_CUDA_CHECK(cudaDeviceGetAttribute(&info->sm_count, cudaDevAttrMultiProcessorCount, device));
    GPUPRIM_CUDA_CHECK(cudaDeviceGetAttribute(&info->max_shared_per_block_optin,
                                              cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    GPUPRIM_CUDA_CHECK(cudaDeviceGetAttribute(&info->max_threads_per_sm,
                                              cudaDevAttrMaxThreadsPerMultiProcessor, device));
    cache[device] = info;
  }
  return *cache[device];
}

}  // namespace gpuprim
