// Device limits queried once per device, never assumed (ATen-free).
#pragma once
#include <cuda_runtime.h>

namespace gpuprim {

struct DeviceInfo {
  int sm_count;
  int max_shared_per_block_optin;  // bytes a block may use after cudaFuncSetAttribute
  int max_threads_per_sm;
};

// Info for the current device; cached after the first call per device.
const DeviceInfo& current_device_info();

}  // namespace gpuprim
