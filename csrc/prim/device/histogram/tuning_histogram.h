// The histograms' launch constants (histogram.cuh), as data: a struct per architecture, each constant with the
// reason for its value; `Tuning` is the struct the kernels use.
#pragma once
#include <cstdint>

#include "prim/util/launch.h"

namespace gpuprim {
namespace histogram {

// Measured on sm_90; the default on every architecture until another one has its own struct.
struct TuningSm90 {
  static constexpr int kThreads = kBlockThreads;                       // 8 warps: up to 8 counter copies a block
  static constexpr int kLaneBytes = 16;                                // count_kernel: one 16-byte load a lane a step
  static constexpr int64_t kSharedBudget = 32 * 1024;                  // counter copies a block: several blocks an SM
  static constexpr int kOrderedGroups = 8;                             // ordered: 8 loads in flight a lane (few warps)
  static constexpr int kOrderedBlocks = 256;                           // ordered: a fixed grid, the same bits anywhere
  static constexpr int64_t kOrderedGlobalBudget = int64_t(128) << 20;  // ordered: per-warp histograms in memory
};

using Tuning = TuningSm90;

}  // namespace histogram
}  // namespace gpuprim
