// Stable radix sorts of unsigned keys with an index payload. Keys are always sorted ascending as unsigned
// integers, made by the one key codec (prim/util/key_codec.cuh: torch's order, NaN last, -0.0 == +0.0, a
// descending sort inverts every key), so one CUB instantiation per key width serves every dtype and order.
// sort_pairs_direct is the exception: signed keys sorted by CUB as they are, from input buffers.
// The CUB calls are declared here and instantiated in common/radix_sort*_cuda.cu (compile time).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#include "prim/util/key_codec.cuh"
#include "prim/util/workspace.h"

namespace gpuprim {
namespace radix_sort {

// The key codec (prim/util/key_codec.cuh) under the names its users know it by here.
using gpuprim::KeyCodec;
using gpuprim::KeyKind;

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
