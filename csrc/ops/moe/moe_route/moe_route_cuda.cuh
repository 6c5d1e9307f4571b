// Device code shared by the two files of gpuprim::moe_route_metadata's CUDA kernels: moe_route_cuda.cu (the entry
// and the radix-sort path) and moe_route_fast_cuda.cu (the sort-free path for num_experts <= kMaxFastExperts).
#pragma once
#include <climits>
#include <cstdint>

#include "ops/moe/moe_route/moe_route_launch.h"

namespace gpuprim {
namespace moe {

constexpr int64_t kMaxFastExperts = 1024;  // route_kernel's shared memory: 32 bytes per expert

// count rounded up to a multiple of pad (>= 1). A 64-bit division is ~70 instructions, and a block takes one
// per expert: none for pad 1 (the default), a 32-bit one when both fit.
__device__ __forceinline__ long long round_up(long long count, long long pad) {
  if (pad == 1) return count;
  if (count <= INT_MAX && pad <= INT_MAX) {  // count + pad - 1 < 2^32
    const uint32_t c = uint32_t(count), p = uint32_t(pad);
    return (long long)((c + p - 1) / p) * pad;
  }
  return (count + pad - 1) / pad * pad;
}

__device__ __forceinline__ uint32_t expert_key(int64_t e, int64_t experts) {
  return (e >= 0 && e < experts) ? uint32_t(e) : uint32_t(experts);
}

// expert_key of the user's id at flat position `pair`, recording an id outside [0, E) (check == nullptr: not).
__device__ __forceinline__ uint32_t checked_expert_key(int64_t e, int64_t experts, int64_t pair,
                                                       const InputCheck* check) {
  if (e >= 0 && e < experts) return uint32_t(e);
  if (check != nullptr) record_input_error(*check, pair, e);
  return uint32_t(experts);
}


// The sort-free path: one launch up to 32 tiles of pairs (cooperative above one), else three. ids: int64 expert
// ids, or uint32 keys (E = dropped). Instantiated for int64_t and uint32_t in moe_route_fast_cuda.cu.
template <typename Id>
void route_fast(const Id* ids, int64_t n, MoeRouteShape shape, int64_t* counts, int64_t* offsets, int64_t* slots,
                int64_t* token_ids, int64_t* num_dropped, Workspace& workspace, cudaStream_t stream);

}  // namespace moe
}  // namespace gpuprim
