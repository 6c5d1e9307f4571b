// ATen-free interface between hash_map_cuda.cpp (glue) and hash_map_cuda.cu (prim's device hash table).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "prim/util/input_error.cuh"
#include "prim/util/workspace.h"

namespace gpuprim {

// The table's tensors as pointers: key_bytes 4 (int32) or 8 (int64), value_bytes 4 or 8 (values as bits);
// slot s's key and value at keys[s * key_stride], values[s * value_stride] (elements).
struct HashMapTable {
  void* keys;
  void* values;
  int64_t* state;
  int64_t capacity;
  int key_bytes, value_bytes;
  int64_t key_stride, value_stride;
};

// Insert-or-assign of n pairs, the lowest position winning among equal keys; a key that finds the table full
// is recorded in `full` and skipped. No host sync.
void hash_map_insert_cuda_launch(const HashMapTable& table, const void* keys, const void* values, int64_t n,
                                 InputCheck full, Workspace& workspace, cudaStream_t stream);

// out[i] = the value of queries[i] or default_bits (out may be null); found[i] = present (found may be null).
void hash_map_find_cuda_launch(const HashMapTable& table, const void* queries, int64_t n, uint64_t default_bits,
                               void* out, bool* found, cudaStream_t stream);

}  // namespace gpuprim
