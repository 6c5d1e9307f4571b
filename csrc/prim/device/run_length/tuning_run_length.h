// The run-length encoder's launch constants (run_length.cuh), as data: a struct per architecture, each constant
// with the reason for its value; `Tuning` is the struct the kernels use.
#pragma once

#include "prim/util/launch.h"

namespace gpuprim {
namespace run_length {

// Measured on sm_90; the default on every architecture until another one has its own struct.
struct TuningSm90 {
  static constexpr int kThreads = kBlockThreads;  // the library's default block: 8 warps
  static constexpr int kItems = 16;               // consecutive elements a thread: 16-byte loads, heads in one mask
};

using Tuning = TuningSm90;

}  // namespace run_length
}  // namespace gpuprim
