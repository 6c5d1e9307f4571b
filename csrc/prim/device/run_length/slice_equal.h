// Equality of elements and of slices under the dtype's == (NaN != NaN, -0.0 == +0.0), through the key codec,
// so that it works on raw element bits of any dtype. Host-compilable: the CPU kernels of unique(dim=) and
// run_length_encode(dim=) compare slices with it, and encode_slices' heads kernel compares elements with it.
#pragma once
#include <cstdint>

#include "prim/util/host_device.h"
#include "prim/util/key_codec.cuh"

namespace gpuprim {
namespace run_length {

// a == b for the elements with bits a and b; codec is the dtype's ascending codec (key_codec<T>(false)).
template <typename Bits>
GPUPRIM_HD bool elements_equal(Bits a, Bits b, const KeyCodec<Bits>& codec) {
  const Bits key = codec.encode(a);
  // Every NaN has the largest key, so equal keys that are a NaN's are still two different elements.
  return key == codec.encode(b) && !(codec.kind == KeyKind::kFloat && key == Bits(~Bits(0)));
}

// Whether the slices a[0, width) and b[0, width) are equal element by element (two empty slices are).
template <typename Bits>
GPUPRIM_HD bool slices_equal(const Bits* a, const Bits* b, int64_t width, const KeyCodec<Bits>& codec) {
  for (int64_t c = 0; c < width; ++c) {
    if (!elements_equal(a[c], b[c], codec)) return false;
  }
  return true;
}

}  // namespace run_length
}  // namespace gpuprim
