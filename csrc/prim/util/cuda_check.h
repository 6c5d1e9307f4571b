// Error checks for CUDA runtime calls inside launchers (ATen-free).
#pragma once
#include <cuda_runtime.h>
#include <stdexcept>
#include <string>

namespace gpuprim {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  throw std::runtime_error(std::string("gpuprim: CUDA error '") + cudaGetErrorString(err) + "' in " + what +
                           " at " + file + ":" + std::to_string(line));
}

}  // namespace gpuprim

#define GPUPRIM_CUDA_CHECK(expr)                                                  \
  do {                                                                            \
    cudaError_t gpuprim_err_ = (expr);                                            \
    if (gpuprim_err_ != cudaSuccess) ::gpuprim::throw_cuda_error(gpuprim_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After every kernel launch: catches bad launch configurations immediately.
#define GPUPRIM_LAUNCH_CHECK() GPUPRIM_CUDA_CHECK(cudaGetLastError())
