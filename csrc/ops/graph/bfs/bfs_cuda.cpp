// CUDA glue of gpuprim::bfs: checks, outputs, the transpose for the pull direction, stream and workspace;
// kernels in bfs_cuda.cu.
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/cuda_workspace.h"
#include "common/torch_utils.h"
#include "ops/graph/bfs/bfs.h"
#include "ops/graph/csr_transpose/csr_transpose_launch.h"

namespace gpuprim {
namespace {

std::tuple<at::Tensor, at::Tensor> bfs_cuda(const at::Tensor& crow, const at::Tensor& col, const at::Tensor& sources,
                                            std::optional<int64_t> max_depth, c10::string_view direction,
                                            bool symmetric, std::optional<bool> deterministic) {
  const InputErrorScope errors(crow.device(), InputOp::kBfs);
  const BfsArgs args = bfs_check(crow, col, sources, max_depth, direction);
  const c10::cuda::CUDAGuard guard(crow.device());
  auto [distance, parent] = bfs_outputs(crow);
  const int64_t vertices = crow.size(0) - 1, edges = col.size(0);
  if (vertices == 0) return {distance, parent};
  const at::Tensor crow_c = crow.contiguous(), col_c = col.contiguous();
  const at::Tensor sources64 = sources.to(at::kLong).contiguous();
  TorchWorkspace workspace(crow.device());
  const InputCheck col_check = errors.check(InputArg::kCol, InputRule::kOutOfRange, vertices);
  at::Tensor crow_t, col_t;  // in-edges for the pull direction
  if (args.direction != BfsDirection::kTopDown) {
    if (symmetric) {
      crow_t = crow_c;
      col_t = col_c;
    } else {  // csr_transpose's launcher, so that bad input is reported as bfs's
      crow_t = at::empty({vertices + 1}, crow_c.options());
      col_t = at::empty({edges}, crow_c.options());
      const at::Tensor perm = at::empty({edges}, crow_c.options().dtype(at::kLong));
      csr_transpose_cuda_launch(crow_c.const_data_ptr(), col_c.const_data_ptr(), to_dtype(crow.scalar_type()),
                                vertices, vertices, edges, errors.check(InputArg::kCrow, InputRule::kNotAtEnd, edges),
                                col_check, crow_t.mutable_data_ptr(), col_t.mutable_data_ptr(),
                                perm.mutable_data_ptr<int64_t>(), workspace, current_stream());
    }
  }
  const BfsGraph graph{crow_c.const_data_ptr(),
                       col_c.const_data_ptr(),
                       crow_t.defined() ? crow_t.const_data_ptr() : nullptr,
                       col_t.defined() ? col_t.const_data_ptr() : nullptr,
                       to_dtype(crow.scalar_type()),
                       vertices,
                       edges,
                       /*in_edges_sorted=*/!symmetric};
  bfs_cuda_launch(graph, sources64.const_data_ptr<int64_t>(), sources64.numel(), args.max_depth, args.direction,
                  resolve_deterministic(deterministic),
                  errors.check(InputArg::kSources, InputRule::kOutOfRange, vertices),
                  col_check, distance.mutable_data_ptr<int32_t>(),
                  parent.mutable_data_ptr<int64_t>(), workspace, current_stream());
  return {distance, parent};
}

}  // namespace

TORCH_LIBRARY_IMPL(gpuprim, CUDA, m) { m.impl("bfs", &bfs_cuda); }

}  // namespace gpuprim
