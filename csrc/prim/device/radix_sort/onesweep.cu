// gpuprim::sort of one row of int32 or fp32 keys by the onesweep sort (prim/onesweep.cuh): the codec of the
// key kind and order is compiled in (onesweep::SortKey), so each of the four is one instantiation. A file of its own so
// that its kernels compile in parallel with sort_cuda.cu's CUB sorts.
#include "prim/device/radix_sort/onesweep.h"
#include "prim/device/radix_sort/onesweep.cuh"

namespace gpuprim {
namespace {

// CUB's SM90 onesweep tile for 4-byte keys with 4-byte values (384 threads x 23 keys), 2 blocks per SM, 4
// look-back statuses read per round trip (the other configurations probed: DESIGN.md).
using Config = onesweep::Config<384, 23, 2, 4>;

template <class Ops>
void sort_with(const uint32_t* x, int64_t n, uint32_t* values, int64_t* indices, Ops ops, Workspace& workspace,
               cudaStream_t stream) {
  onesweep::sort<Config>(x, values, indices, uint32_t(n), ops, workspace, stream);
}

}  // namespace

void sort_row_onesweep(const uint32_t* x, radix_sort::KeyKind kind, bool descending, int64_t n, uint32_t* values,
                       int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  using radix_sort::KeyKind;
  using onesweep::SortKey;
  if (kind == KeyKind::kFloat) {
    if (descending) return sort_with(x, n, values, indices, SortKey<KeyKind::kFloat, true>{x}, workspace, stream);
    return sort_with(x, n, values, indices, SortKey<KeyKind::kFloat, false>{x}, workspace, stream);
  }
  if (descending) return sort_with(x, n, values, indices, SortKey<KeyKind::kSigned, true>{x}, workspace, stream);
  sort_with(x, n, values, indices, SortKey<KeyKind::kSigned, false>{x}, workspace, stream);
}

}  // namespace gpuprim
