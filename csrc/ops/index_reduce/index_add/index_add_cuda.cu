// CUDA launcher of gpuprim::index_add and gpuprim::scatter_reduce (index_add_launch.h): the typed entry into
// prim's reduction by key (prim/device/segmented_reduce/reduce_by_key.cuh).
#include <cstdint>
#include <type_traits>

#include "ops/index_reduce/index_add/index_add_launch.h"
#include "prim/device/segmented_reduce/reduce_by_key.cuh"
#include "prim/util/dispatch.h"

namespace gpuprim {

// The element types of the index reductions: every integer and floating type but bool.
using IndexReduceTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t, __half, __nv_bfloat16, float, double>;

void index_reduce_cuda_launch(const void* index, DType index_type, const void* src, DType type,
                              IndexReduceShape shape, Reduce reduce, bool include_self, double alpha_float,
                              int64_t alpha_int, bool deterministic, const InputCheck& check,
                              const int64_t* user_index, void* out, Workspace& workspace, cudaStream_t stream) {
  dispatch<IndexReduceTypes>("index_add", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename AccOf<T>::type;
    const Acc scale = std::is_integral_v<Acc> ? static_cast<Acc>(alpha_int) : static_cast<Acc>(alpha_float);
    dispatch<IndexTypes>("index_add", index_type, [&](auto index_tag) {
      using Index = typename decltype(index_tag)::type;
      segmented::reduce_by_key<T>(static_cast<const Index*>(index), static_cast<const T*>(src),
                                  {shape.outer, shape.items, shape.rows, shape.inner}, reduce, include_self, scale,
                                  deterministic, {check, user_index}, static_cast<T*>(out), workspace,
                                  stream);
    });
  });
}

}  // namespace gpuprim
