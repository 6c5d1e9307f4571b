// Kernels of gpuprim::unique(dim=): a composition of prim. radix_sort::sort_slices orders the slices
// lexicographically (stable radix sorts of packed column keys, last columns first), then
// run_length::encode_slices walks them in that order: heads where a slice differs from the one before it, a scan
// of the heads, the run starts, counts, inverse and the first slice of each run. Integer work only: the same bits
// run to run, on any GPU, and as the CPU kernel (whose stable sort gives the same order).
#include <cstring>

#include "ops/hash/unique/unique_launch.h"
#include "prim/device/radix_sort/sort_slices.h"
#include "prim/device/run_length/encode_slices.h"
#include "prim/util/dispatch.h"
#include "prim/util/key_codec.cuh"

namespace gpuprim {

void unique_slices_cuda_launch(const void* rows, DType type, int64_t m, int64_t width, int64_t capacity,
                               uint64_t fill_bits, void* values, int64_t* inverse, int64_t* counts, int64_t* num_unique,
                               Workspace& workspace, cudaStream_t stream) {
  dispatch<AllTypes>("unique", type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Bits = KeyBits<T>;
    const KeyCodec<Bits> codec = key_codec<T>(false);
    const auto* slices = static_cast<const Bits*>(rows);
    Bits fill;
    memcpy(&fill, &fill_bits, sizeof(Bits));
    auto* order = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * size_t(m > 0 ? m : 1)));
    radix_sort::sort_slices<Bits>(slices, codec, m, width, order, workspace, stream);
    run_length::encode_slices<Bits>(slices, order, m, width, codec, capacity, fill, static_cast<Bits*>(values), counts,
                                    inverse, num_unique, workspace, stream);
  });
}

}  // namespace gpuprim
