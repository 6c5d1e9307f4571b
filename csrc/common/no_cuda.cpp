// Built only without a CUDA toolkit: a CUDA tensor then gets a clear error naming the
// problem instead of the dispatcher's "could not run ... with arguments from the CUDA backend".
#include <torch/library.h>

namespace gpuprim {
namespace {

void no_cuda_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack*) {
  TORCH_CHECK(false, "gpuprim.", op.schema().name().substr(sizeof("gpuprim::") - 1),
              ": got a CUDA tensor, but this gpuprim build has no CUDA kernels (it was built without a "
              "CUDA toolkit); rebuild with nvcc available or move the inputs to the CPU");
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) {
  for (const char* name : {"cumsum",
                           "bincount",
                           "histogram",
                           "segment_reduce",
                           "segment_reduce_backward",
                           "sort",
                           "sort_values",
                           "sort_pairs",
                           "sum",
                           "mean",
                           "compact",
                           "masked_select",
                           "run_length_encode",
                           "moe_route_metadata",
                           "moe_permute",
                           "moe_unpermute",
                           "moe_unpermute_backward",
                           "topk",
                           "topk_backward",
                           "topk_gating",
                           "topk_gating_backward",
                           "embedding_bag",
                           "embedding_bag_backward",
                           "index_add",
                           "index_add_",
                           "scatter_reduce",
                           "scatter_reduce_",
                           "scatter_add",
                           "scatter_add_",
                           "unique",
                           "hash_map_insert_",
                           "hash_map_find",
                           "hash_map_contains",
                           "spmm",
                           "spmm_backward",
                           "csr_transpose",
                           "bfs"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&no_cuda_kernel>());
  }
}

}  // namespace gpuprim
