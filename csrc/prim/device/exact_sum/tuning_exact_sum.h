// The exact sum's launch constants (exact_sum.cuh), as data: a struct per architecture, each constant with the
// reason for its value; `Tuning` is the struct the kernels use. The bits never depend on them: partial states
// merge exactly. Measurements: docs/experiments/sum.md.
#pragma once
#include <cstdint>

#include "prim/util/launch.h"

namespace gpuprim {
namespace exact_sum {

// Measured on sm_90; the default on every architecture until another one has its own struct.
struct TuningSm90 {
  static constexpr int kThreads = kBlockThreads;     // the library's default block (the test knob varies it)
  static constexpr int64_t kMinVectorsPerLane = 8;   // rows split in >= 8 vectors a lane: amortizes the warp merge
  static constexpr int kGroupValues = 4;             // values range-checked at once: 8 (16-bit types) spilled
  static constexpr int64_t kColumnMinValues = 16;    // columns: n split in >= 16 values a thread
  static constexpr int kColumnUnroll = 4;            // columns: 4 independent loads in flight a thread
};

using Tuning = TuningSm90;

}  // namespace exact_sum
}  // namespace gpuprim
