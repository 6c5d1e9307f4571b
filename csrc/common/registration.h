#pragma once
// Kernel registration in one statement, so an op family's CPU / CUDA / Meta / Autograd files each end in a line:
//   TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { impl(m, "sum", &sum_cpu<false>, "mean", &sum_cpu<true>); }
//   GPUPRIM_IMPL_WITH_BACKWARD(CPU, spmm, cpu)  // "spmm" -> spmm_cpu, "spmm_backward" -> spmm_backward_cpu
#include <torch/library.h>

#include <utility>

namespace gpuprim {

inline void impl(torch::Library& /*m*/) {}

// (name, kernel) pairs, registered in order.
template <typename Kernel, typename... Rest>
void impl(torch::Library& m, const char* name, Kernel&& kernel, Rest&&... rest) {
  m.impl(name, std::forward<Kernel>(kernel));
  impl(m, std::forward<Rest>(rest)...);
}

}  // namespace gpuprim

// An op and its backward op for one dispatch key, with kernels named <op>_<suffix> and <op>_backward_<suffix>.
#define GPUPRIM_IMPL_WITH_BACKWARD(key, op, suffix) \
  TORCH_LIBRARY_IMPL(gpuprim, key, m) {                                   \
    ::gpuprim::impl(m, #op, &op##_##suffix, #op "_backward", &op##_backward_##suffix); \
  }
