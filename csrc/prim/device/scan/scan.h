// The interface types of the row scans (scan.cuh), host-compilable so that an op's ATen glue can name them.
#pragma once
#include <cstdint>

namespace gpuprim {
namespace scan {

// A contiguous [outer, n, inner] tensor, scanned along n.
struct Shape {
  int64_t outer, n, inner;
};

// How rows longer than a warp's (inner == 1) are scanned.
enum class Algorithm {
  kAuto,       // the single pass with the look-back for 4-byte accumulators, three passes for 8-byte ones
  kThreePass,  // reduce-then-scan for every accumulator (reads the input twice): for comparisons
};

}  // namespace scan
}  // namespace gpuprim
