// gpuprim::bfs — declarations shared by its CPU, CUDA and Meta files.
#pragma once
#include <ATen/ATen.h>
#include <c10/util/string_view.h>

#include <optional>

#include "ops/graph/bfs/bfs_launch.h"

namespace gpuprim {

struct BfsArgs {
  BfsDirection direction;
  int64_t max_depth;  // levels to expand; no bound: INT64_MAX
};

// Checks everything that can be checked without reading data (SymInt-safe: also used by the Meta kernel).
BfsArgs bfs_check(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& sources,
                  std::optional<int64_t> max_depth, c10::string_view direction);

// Empty outputs: distance int32 [V], parent int64 [V].
std::tuple<at::Tensor, at::Tensor> bfs_outputs(const at::Tensor& crow);

}  // namespace gpuprim
