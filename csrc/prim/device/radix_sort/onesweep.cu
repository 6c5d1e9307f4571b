// The row sort's path for one row of int32 or fp32 keys, the onesweep sort (onesweep.cuh): the codec of the key
// kind and order is compiled in (onesweep::SortKey), so each of the four is one instantiation. A file of its own
// so that its kernels compile in parallel with sort_rows.cu.
#include "prim/device/radix_sort/onesweep.h"
#include "prim/device/radix_sort/onesweep.cuh"

namespace gpuprim {
namespace {

// tuning_radix_sort.h's tile (the other configurations probed: docs/experiments/sort.md).
using Config = onesweep::Config<radix_sort::Tuning::kOnesweepThreads, radix_sort::Tuning::kOnesweepItems,
                                radix_sort::Tuning::kOnesweepMinBlocks, radix_sort::Tuning::kOnesweepLookbackBatch>;

template <class Ops>
void sort_with(const uint32_t* x, int64_t n, uint32_t* values, int64_t* indices, Ops ops, Workspace& workspace,
               cudaStream_t stream) {
  onesweep::sort<Config>(x, values, indices, uint32_t(n), ops, workspace, stream);
}

}  // namespace

void sort_row_onesweep(const uint32_t* x, KeyKind kind, bool descending, int64_t n, uint32_t* values,
                       int64_t* indices, Workspace& workspace, cudaStream_t stream) {
  using onesweep::SortKey;
  if (kind == KeyKind::kFloat) {
    if (descending) return sort_with(x, n, values, indices, SortKey<KeyKind::kFloat, true>{x}, workspace, stream);
    return sort_with(x, n, values, indices, SortKey<KeyKind::kFloat, false>{x}, workspace, stream);
  }
  if (descending) return sort_with(x, n, values, indices, SortKey<KeyKind::kSigned, true>{x}, workspace, stream);
  sort_with(x, n, values, indices, SortKey<KeyKind::kSigned, false>{x}, workspace, stream);
}

}  // namespace gpuprim
