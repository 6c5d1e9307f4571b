// Kernels launcher of gpuprim::index_add and gpuprim::scatter_reduce (see index_add_launch.h): the sorted,
// deterministic path of prim/index_reduce.cuh, or one atomicAdd per element for a non-deterministic sum.
#include <cstdint>
#include <type_traits>

#include "prim/util/device_info.h"
#include "ops/index_reduce/index_add/index_add_launch.h"
#include "prim/device/segmented_reduce/sorted_reduce.cuh"
#include "prim/util/convert.cuh"

namespace gpuprim {
namespace {

using namespace index_reduce;

template <typename T>
constexpr bool kHasAtomicAdd = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                               std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

template <typename T, typename Index>
void run(const Index* index, const T* src, const IndexReduceShape& shape, IndexReduce reduce, bool include_self,
         double alpha_float, int64_t alpha_int, bool deterministic, T* out, Workspace& workspace,
         cudaStream_t stream) {
  using Acc = typename AccOf<T>::type;
  const Acc scale = std::is_integral_v<Acc> ? static_cast<Acc>(alpha_int) : static_cast<Acc>(alpha_float);
  if constexpr (kHasAtomicAdd<T>) {
    if (!deterministic && reduce == IndexReduce::kSum && include_self) {
      const T t_scale = std::is_integral_v<T> ? static_cast<T>(alpha_int) : static_cast<T>(alpha_float);
      const int64_t total = shape.outer * shape.items * shape.inner;
      atomic_sum_kernel<T, Index><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
          src, index, shape.outer, shape.items, shape.rows, shape.inner, t_scale, out);
      GPUPRIM_LAUNCH_CHECK();
      return;
    }
  }
  const int combine_blocks = current_device_info().sm_count * 8;
  const bool small = shape.items < (int64_t(1) << 31) && uint64_t(shape.rows) < (uint64_t(1) << 32) - 1;
  if (small) {
    const auto sorted = sort_index<Index, uint32_t, int32_t>(index, shape.items, shape.rows, workspace, stream);
    reduce_sorted<T>(sorted, src, shape.outer, shape.items, shape.rows, shape.inner, reduce, include_self, scale,
                     out, combine_blocks, workspace, stream);
  } else {
    const auto sorted = sort_index<Index, uint64_t, int64_t>(index, shape.items, shape.rows, workspace, stream);
    reduce_sorted<T>(sorted, src, shape.outer, shape.items, shape.rows, shape.inner, reduce, include_self, scale,
                     out, combine_blocks, workspace, stream);
  }
}

template <typename T>
void run_index(const void* index, DType index_type, const void* src, const IndexReduceShape& shape,
               IndexReduce reduce, bool include_self, double alpha_float, int64_t alpha_int, bool deterministic,
               void* out, Workspace& workspace, cudaStream_t stream) {
  const T* s = static_cast<const T*>(src);
  T* o = static_cast<T*>(out);
  if (index_type == DType::kInt32) {
    run<T>(static_cast<const int32_t*>(index), s, shape, reduce, include_self, alpha_float, alpha_int, deterministic,
           o, workspace, stream);
  } else if (index_type == DType::kInt64) {
    run<T>(static_cast<const int64_t*>(index), s, shape, reduce, include_self, alpha_float, alpha_int, deterministic,
           o, workspace, stream);
  } else {
    unsupported_dtype("index_add", index_type);
  }
}

}  // namespace

void index_reduce_cuda_launch(const void* index, DType index_type, const void* src, DType type,
                              IndexReduceShape shape, IndexReduce reduce, bool include_self, double alpha_float,
                              int64_t alpha_int, bool deterministic, void* out, Workspace& workspace,
                              cudaStream_t stream) {
  if (shape.outer == 0 || shape.items == 0 || shape.rows == 0 || shape.inner == 0) return;
  auto go = [&](auto tag) {
    using T = decltype(tag);
    run_index<T>(index, index_type, src, shape, reduce, include_self, alpha_float, alpha_int, deterministic, out,
                 workspace, stream);
  };
  switch (type) {
    case DType::kUInt8: return go(uint8_t());
    case DType::kInt8: return go(int8_t());
    case DType::kInt16: return go(int16_t());
    case DType::kInt32: return go(int32_t());
    case DType::kInt64: return go(int64_t());
    case DType::kFloat16: return go(__half());
    case DType::kBFloat16: return go(__nv_bfloat16());
    case DType::kFloat32: return go(float());
    case DType::kFloat64: return go(double());
    default: unsupported_dtype("index_add", type);
  }
}

}  // namespace gpuprim
