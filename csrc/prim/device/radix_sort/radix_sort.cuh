// Stable radix sort of unsigned keys with an index payload, and the codec that maps every
// element type to an unsigned key whose unsigned order is the type's total order.
//
// Keys are always sorted ascending as unsigned integers: signed integers flip the sign bit,
// floats use the usual sign-magnitude twiddle with every NaN mapped to the largest key (NaN sorts
// last, as in torch.sort) and -0.0 mapped to +0.0's key (they compare equal), and a descending
// sort inverts every key. So one CUB instantiation per key width serves every dtype and order.
// sort_pairs_direct is the exception: signed keys sorted by CUB as they are, from input buffers.
// The CUB calls are declared here and instantiated in common/radix_sort*_cuda.cu (compile time).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/workspace.h"

namespace gpuprim {
namespace radix_sort {

enum class KeyKind : int8_t { kUnsigned, kSigned, kFloat };

// Encodes raw element bits (Bits = the unsigned integer of the element's width) as sort keys.
template <typename Bits>
struct KeyCodec {
  static constexpr Bits kSign = Bits(Bits(1) << (sizeof(Bits) * 8 - 1));
  KeyKind kind;
  Bits inf_bits;  // floats: the bits of +inf; a magnitude above it is a NaN
  bool descending;

  __host__ __device__ __forceinline__ bool is_nan(Bits bits) const {
    return kind == KeyKind::kFloat && Bits(bits & Bits(~kSign)) > inf_bits;
  }
  __host__ __device__ __forceinline__ Bits encode(Bits bits) const {
    Bits key = bits;
    if (kind == KeyKind::kSigned) {
      key = Bits(bits ^ kSign);
    } else if (kind == KeyKind::kFloat) {
      const Bits magnitude = Bits(bits & Bits(~kSign));
      if (magnitude > inf_bits) {
        key = Bits(~Bits(0));  // every NaN: the largest key
      } else if (magnitude == 0) {
        key = kSign;  // -0.0 and +0.0: the key of +0.0
      } else {
        key = (bits & kSign) ? Bits(~bits) : Bits(bits | kSign);
      }
    }
    return descending ? Bits(~key) : key;
  }
  // Whether decode(key) gives back the element's bits; not for NaN (payload and sign are
  // lost) and zero (its sign is lost): those are read from the input instead.
  __host__ __device__ __forceinline__ bool decodes_exactly(Bits key) const {
    if (kind != KeyKind::kFloat) return true;
    const Bits ascending = descending ? Bits(~key) : key;
    return ascending != Bits(~Bits(0)) && ascending != kSign;
  }
  __host__ __device__ __forceinline__ Bits decode(Bits key) const {
    const Bits ascending = descending ? Bits(~key) : key;
    if (kind == KeyKind::kSigned) return Bits(ascending ^ kSign);
    if (kind == KeyKind::kFloat) return (ascending & kSign) ? Bits(ascending ^ kSign) : Bits(~ascending);
    return ascending;
  }
};

// Stable ascending sort of n (key, value) pairs by the key bits [0, end_bit). keys[0] and
// values[0] hold the input; keys[1] and values[1] are scratch of the same size. Returns the
// index (0 or 1) of the buffers that hold the sorted output (known on the host: no sync).
// Value = int32_t requires n < 2^31.
template <typename Key, typename Value>
int sort_pairs(Key* keys[2], Value* values[2], int64_t n, int end_bit, Workspace& workspace, cudaStream_t stream);

// Instantiated once, in common/radix_sort_cuda.cu, for Key in {uint8, uint16, uint32, uint64} and
// Value in {int32, int64}.

// Stable sort of n (key, value) pairs by the key bits [0, end_bit), from keys_in and values_in
// (left unchanged) to keys_out and values_out: signed keys go to CUB as they are (no encode pass),
// its alternate buffers come from the workspace. n <= INT32_MAX. Stable in both orders (CUB's
// descending sort inverts the keys and sorts them ascending). Instantiated once, in
// common/radix_sort_direct_cuda.cu, ascending for Key in {int32, int64} and Value in {uint32,
// uint64} (gpuprim::sort_pairs, gpuprim::sort's int64 rows).
template <typename Key, typename Value, bool kDescending = false>
void sort_pairs_direct(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int64_t n,
                       int end_bit, Workspace& workspace, cudaStream_t stream);

// Sort of n signed keys as they are (no payload: equal keys are the same bits, so stability is moot),
// keys_in (left unchanged) to keys_out; CUB's alternate buffer comes from the workspace.
// n <= INT32_MAX. Instantiated in common/radix_sort_direct_cuda.cu for Key in {int32, int64}, both
// orders (gpuprim::sort_values).
template <typename Key, bool kDescending>
void sort_keys_direct(const Key* keys_in, Key* keys_out, int64_t n, Workspace& workspace, cudaStream_t stream);

}  // namespace radix_sort
}  // namespace gpuprim
