// CPU kernel of gpuprim::bfs: a level-synchronous search, each vertex's parent the smallest-id neighbour one
// level closer (what the CUDA kernels give with the determinism flag on).
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "common/input_errors.h"
#include "ops/graph/bfs/bfs.h"
#include "ops/graph/csr_checks.h"

namespace gpuprim {
namespace {

// deterministic: always the smallest parent (the reference).
std::tuple<at::Tensor, at::Tensor> bfs_cpu(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& sources,
                                           std::optional<int64_t> max_depth, c10::string_view direction,
                                           bool /*symmetric*/, std::optional<bool> /*deterministic*/) {
  const BfsArgs args = bfs_check(crow, col, sources, max_depth, direction);
  auto [distance, parent] = bfs_outputs(crow);
  const at::Tensor crow64 = crow.to(at::kLong).contiguous(), col64 = col.to(at::kLong).contiguous();
  const at::Tensor src64 = sources.to(at::kLong).contiguous();
  const int64_t* r = crow64.const_data_ptr<int64_t>();
  const int64_t* c = col64.const_data_ptr<int64_t>();
  const int64_t* s = src64.const_data_ptr<int64_t>();
  const int64_t vertices = crow.size(0) - 1, edges = col.size(0);
  const InputOp op = InputOp::kBfs;
  check_csr_structure(op, r, vertices, c, edges, vertices);
  for (int64_t i = 0; i < sources.size(0); ++i) {
    if (s[i] < 0 || s[i] >= vertices) {
      raise_input_error(op, InputArg::kSources, InputRule::kOutOfRange, i, s[i], vertices);
    }
  }
  int32_t* dist = distance.mutable_data_ptr<int32_t>();
  int64_t* par = parent.mutable_data_ptr<int64_t>();
  std::fill(dist, dist + vertices, -1);
  std::fill(par, par + vertices, -1);
  std::vector<int64_t> frontier, next;
  for (int64_t i = 0; i < sources.size(0); ++i) {
    if (dist[s[i]] == 0) continue;
    dist[s[i]] = 0;
    par[s[i]] = s[i];
    frontier.push_back(s[i]);
  }
  for (int64_t level = 0; !frontier.empty() && level < args.max_depth; ++level) {
    next.clear();
    for (const int64_t u : frontier) {
      for (int64_t k = r[u]; k < r[u + 1]; ++k) {
        const int64_t v = c[k];
        if (dist[v] == -1) {
          dist[v] = static_cast<int32_t>(level + 1);
          par[v] = u;
          next.push_back(v);
        } else if (dist[v] == level + 1 && u < par[v]) {
          par[v] = u;
        }
      }
    }
    frontier.swap(next);
  }
  return {distance, parent};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CPU, m) { m.impl("bfs", &bfs_cpu); }

}  // namespace gpuprim
