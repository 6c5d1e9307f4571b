// Device-independent parts of gpuprim::bfs: argument checks and output shapes (CPU, CUDA, Meta).
#include "ops/graph/bfs/bfs.h"

#include <limits>
#include <string>

#include "common/torch_utils.h"
#include "ops/graph/csr_checks.h"

namespace gpuprim {

BfsArgs bfs_check(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& sources,
                  std::optional<int64_t> max_depth, c10::string_view direction) {
  BfsDirection dir = BfsDirection::kAuto;
  if (direction == "top_down") {
    dir = BfsDirection::kTopDown;
  } else if (direction == "bottom_up") {
    dir = BfsDirection::kBottomUp;
  } else {
    GPUPRIM_CHECK_ARG(direction == "auto", "bfs", "direction", "one of 'auto', 'top_down', 'bottom_up'",
                      "'" + std::string(direction) + "'");
  }
  check_csr_arguments("bfs", crow, col, "vertices");
  GPUPRIM_CHECK_ARG(sources.dim() == 1, "bfs", "sources", "1-D", std::to_string(sources.dim()) + "-D tensor");
  GPUPRIM_CHECK_DTYPE(sources.scalar_type() == at::kInt || sources.scalar_type() == at::kLong, "bfs", "sources",
                      "an int32 or int64 tensor", sources.scalar_type());
  check_same_device("bfs", crow, "col", col);
  check_same_device("bfs", crow, "sources", sources);
  if (max_depth.has_value()) GPUPRIM_CHECK_ARG(*max_depth >= 0, "bfs", "max_depth", ">= 0", *max_depth);
  return {dir, max_depth.value_or(std::numeric_limits<int64_t>::max())};
}

std::tuple<at::Tensor, at::Tensor> bfs_outputs(const at::Tensor& crow) {
  const auto options = crow.options().memory_format(at::MemoryFormat::Contiguous);
  const c10::SymInt vertices = crow.sym_size(0) - 1;
  return {at::empty_symint({vertices}, options.dtype(at::kInt)), at::empty_symint({vertices}, options.dtype(at::kLong))};
}

}  // namespace gpuprim
