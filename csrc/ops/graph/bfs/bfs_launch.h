// ATen-free interface between bfs_cuda.cpp (glue) and bfs_cuda.cu (kernels).
#pragma once
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/input_error.cuh"
#include "prim/util/workspace.h"
#include "prim/util/stream.h"

namespace gpuprim {

enum class BfsDirection : int8_t { kAuto, kTopDown, kBottomUp };

// A graph of `vertices` vertices in CSR (out-edges): crow [vertices + 1], col [edges]; its transpose (in-edges)
// crow_t/col_t for the pull direction (the same pointers for a symmetric graph, null for top-down only).
struct BfsGraph {
  const void* crow;
  const void* col;
  const void* crow_t;
  const void* col_t;
  DType index_type;
  int64_t vertices, edges;
  bool in_edges_sorted;  // each vertex's in-neighbours in increasing order: the first found is the smallest
};

// distance int32 [vertices] and parent int64 [vertices] (written in full) of the search from `sources`
// (int64 [num_sources]; out-of-range ones recorded and skipped). Expands at most max_depth levels. Syncs with
// the host once per batch of levels to read the termination flag (first after depth 16, then doubling batches; never when max_depth <= 16).
void bfs_cuda_launch(const BfsGraph& graph, const int64_t* sources, int64_t num_sources, int64_t max_depth,
                     BfsDirection direction, bool deterministic, const InputCheck& source_check,
                     const InputCheck& col_check, int32_t* distance, int64_t* parent, Workspace& workspace,
                     cudaStream_t stream);

}  // namespace gpuprim
