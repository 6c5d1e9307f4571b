// Shape function of gpuprim::bfs (SymInt-safe, no data access).
#include <torch/library.h>

#include "ops/graph/bfs/bfs.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> bfs_meta(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& sources,
                                            std::optional<int64_t> max_depth, c10::string_view direction,
                                            bool /*symmetric*/, std::optional<bool> /*deterministic*/) {
  bfs_check(crow, col, sources, max_depth, direction);
  return bfs_outputs(crow);
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, Meta, m) { m.impl("bfs", &bfs_meta); }

}  // namespace gpuprim
