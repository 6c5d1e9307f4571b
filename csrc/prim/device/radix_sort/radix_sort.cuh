// The radix sorts of prim, one entry for every op that sorts (sort, sort_pairs, sort_values, topk's large k,
// embedding_bag, index_add, ...). Keys are sorted ascending as unsigned integers, made by the one key codec
// (prim/util/key_codec.cuh: torch's order, NaN last, -0.0 == +0.0, a descending sort inverts every key), so
// one CUB instantiation per key width serves every dtype and order; the *_direct sorts are the exception
// (signed keys sorted by CUB as they are, from input buffers). Declared here, instantiated once each in
// radix_sort_pairs.cu, radix_sort_direct.cu and sort_rows.cu (compile time).
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

// Instantiated in radix_sort_pairs.cu for Key in {uint8, uint16, uint32, uint64} and Value in {int32, int64}.

// Stable sort of n (key, value) pairs by the key bits [0, end_bit), from keys_in and values_in
// (left unchanged) to keys_out and values_out: signed keys go to CUB as they are (no encode pass),
// its alternate buffers come from the workspace. n <= INT32_MAX. Stable in both orders (CUB's
// descending sort inverts the keys and sorts them ascending). Instantiated in radix_sort_direct.cu,
// ascending for Key in {int32, int64} and Value in {uint32, uint64} (gpuprim::sort_pairs, sort_rows' int64 rows).
template <typename Key, typename Value, bool kDescending = false>
void sort_pairs_direct(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int64_t n,
                       int end_bit, Workspace& workspace, cudaStream_t stream);

// Sort of n signed keys as they are (no payload: equal keys are the same bits, so stability is moot),
// keys_in (left unchanged) to keys_out; CUB's alternate buffer comes from the workspace.
// Any n (CUB's 64-bit offsets past INT32_MAX). Instantiated in radix_sort_direct.cu for Key in {int32, int64},
// both orders (gpuprim::sort_values).
template <typename Key, bool kDescending>
void sort_keys_direct(const Key* keys_in, Key* keys_out, int64_t n, Workspace& workspace, cudaStream_t stream);

// Stable sort of each row of a contiguous [rows, n] array of keys in the codec's order (key_codec<T>(descending)
// is torch.sort's): values gets the sorted elements (bit copies: a zero's sign and a NaN's payload survive),
// indices their int64 positions within the row. x must not overlap the outputs; rows, n <= 0 sort nothing.
// Instantiated in sort_rows.cu for Bits in {uint8, uint16, uint32, uint64} (gpuprim::sort, topk's large k).
template <typename Bits>
void sort_rows(const Bits* x, KeyCodec<Bits> codec, int64_t rows, int64_t n, Bits* values, int64_t* indices,
               Workspace& workspace, cudaStream_t stream);

}  // namespace radix_sort
}  // namespace gpuprim
