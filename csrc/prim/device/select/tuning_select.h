// The flagged selection's launch constants (select.cuh), as data: a struct per architecture, each constant with
// the reason for its value; `Tuning` is the struct the kernels use. Measurements: docs/experiments/compact.md.
#pragma once
#include <cstdint>

#include "prim/util/launch.h"

namespace gpuprim {
namespace select {

// Measured on sm_90; the default on every architecture until another one has its own struct.
struct TuningSm90 {
  static constexpr int kThreads = kBlockThreads;           // 8 warps; bounds for 5-6 blocks an SM spilled
  static constexpr int kChunks = 8;                        // words of up to 4 bytes: 8192-element tiles, 32 KB staged
  static constexpr int kWideChunks = 4;                    // 8-byte words: 4096-element tiles, the same 32 KB
  static constexpr int kLookbackSlots = 1;                 // a window of 32 groups of 32 tiles: a round trip's worth
  static constexpr unsigned kFirstPollDelayNs = 2000;      // this kernel's best of 1000-3000 ns for fp32 and bf16
  static constexpr int64_t kTwoPassMinBytes = int64_t(128) << 20;  // smaller x: the extra launches cost more
  static constexpr int kCountTilesPerBlock = 4;            // count_kernel: 4 tiles' flags loaded at once a block
};

using Tuning = TuningSm90;

}  // namespace select
}  // namespace gpuprim
