// Warp-aggregated atomics on one global counter: the lanes that reach the call together (any subset of a warp,
// e.g. those that won a CAS) add with one atomic instead of one each. Atomics on a single address serialize in
// L2, so a per-element atomicAdd on a queue tail or a size counter caps a kernel at about one element a clock.
#pragma once
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace gpuprim {
namespace warp {

// counter += 1 for each calling lane; returns this lane's old value (distinct, consecutive within the group).
__device__ __forceinline__ unsigned long long aggregated_increment(unsigned long long* counter) {
  namespace cg = cooperative_groups;
  const cg::coalesced_group group = cg::coalesced_threads();
  unsigned long long base = 0;
  if (group.thread_rank() == 0) base = atomicAdd(counter, static_cast<unsigned long long>(group.size()));
  return group.shfl(base, 0) + group.thread_rank();
}

// counter += amount summed over the calling lanes (integers: exact in any order).
__device__ __forceinline__ void aggregated_add(unsigned long long* counter, unsigned long long amount) {
  namespace cg = cooperative_groups;
  const cg::coalesced_group group = cg::coalesced_threads();
  const unsigned long long total = cg::reduce(group, amount, cg::plus<unsigned long long>());
  if (group.thread_rank() == 0) atomicAdd(counter, total);
}

// counter += amount for each calling lane; returns what this lane's own atomicAdd would have returned had the
// lanes added one after another in lane order (one atomic for the group).
__device__ __forceinline__ unsigned long long aggregated_fetch_add(unsigned long long* counter,
                                                                   unsigned long long amount) {
  namespace cg = cooperative_groups;
  const cg::coalesced_group group = cg::coalesced_threads();
  const unsigned long long before = cg::exclusive_scan(group, amount, cg::plus<unsigned long long>());
  const unsigned long long total = group.shfl(before + amount, group.size() - 1);
  unsigned long long base = 0;
  if (group.thread_rank() == 0) base = atomicAdd(counter, total);
  return group.shfl(base, 0) + before;
}

}  // namespace warp
}  // namespace gpuprim
