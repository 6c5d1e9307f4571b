// Programmatic dependent launch (Hopper and newer): a kernel launched with
// launch_dependent() may start while the kernel before it in the stream still runs, so its launch
// latency and whatever it does before wait_for_prerequisites() overlap that kernel's tail. Rules:
//   - the dependent kernel calls wait_for_prerequisites() before it reads or writes anything that the
//     kernels before it in this op write (the wait returns once they have completed and their memory is
//     visible); inputs written before the op began are safe to read at once;
//   - a kernel calls allow_dependents() where the next kernel may start (else it starts when this one ends);
//   - launch_dependent() falls back to an ordinary launch when the kernel's code on this device predates
//     sm_90 (no wait instruction in it), so the wait is never missing where the overlap is allowed.
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "prim/util/cuda_check.h"

namespace gpuprim {
namespace pdl {

__device__ __forceinline__ void wait_for_prerequisites() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether the code of `kernel` (any __global__ function) on the current device is sm_90 or newer:
// asked once per kernel and device (prim/dependent_launch.cu).
bool has_dependent_launch(const void* kernel);

// Launches kernel<<<grid, threads, 0, stream>>>(args...) as a programmatic dependent of the stream's
// previous kernel where the kernel supports it (see above), else as an ordinary launch.
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), unsigned grid, unsigned threads, cudaStream_t stream,
                      Args&&... args) {
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = has_dependent_launch(reinterpret_cast<const void*>(kernel)) ? 1 : 0;
  GPUPRIM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace pdl
}  // namespace gpuprim
