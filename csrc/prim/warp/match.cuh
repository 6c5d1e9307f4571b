// Peer matching: the mask of the lanes of a (full) warp that hold the same label as this lane. Every lane of
// the warp must call these.
#pragma once
#include <cstdint>

#include "prim/util/launch.h"

namespace gpuprim {
namespace warp {

// Any 32- or 64-bit label (the hardware's match; a good choice when labels have many bits).
template <typename Label>
__device__ __forceinline__ unsigned match_any(Label label) {
  return __match_any_sync(kFullMask, label);
}

// A label of kBits low bits (or `bits` at run time): one ballot per bit, complemented under a predicate
// where this lane's bit is clear (CUB's radix-rank idiom: one instruction a bit, cheaper than match_any
// for labels of a few bits).
template <int kBits>
__device__ __forceinline__ unsigned match_bits(uint32_t label) {
  unsigned peers = kFullMask;
#pragma unroll
  for (int b = 0; b < kBits; ++b) {
    unsigned same;
    asm volatile(
        "{\n"
        "  .reg .pred has;\n"
        "  and.b32 %0, %1, %2;\n"
        "  setp.ne.u32 has, %0, 0;\n"
        "  vote.sync.ballot.b32 %0, has, 0xffffffff;\n"
        "  @!has not.b32 %0, %0;\n"
        "}"
        : "=r"(same)
        : "r"(label), "r"(1u << b));
    peers &= same;
  }
  return peers;
}

__device__ __forceinline__ unsigned match_bits(uint32_t label, int bits) {
  unsigned peers = kFullMask;
  for (int b = 0; b < bits; ++b) {
    const bool set = (label >> b) & 1u;
    const unsigned votes = __ballot_sync(kFullMask, set);
    peers &= set ? votes : ~votes;
  }
  return peers;
}

// Whether this lane is the lowest of its peers (the one that acts for the group).
__device__ __forceinline__ bool is_leader(unsigned peers) {
  return int(threadIdx.x % kWarpSize) == __ffs(peers) - 1;
}

}  // namespace warp
}  // namespace gpuprim
