// Launcher of gpuprim::bfs: a level-synchronous, direction-optimizing breadth-first search whose control
// lives on the device. Each level is three launches the host queues without looking at results:
//   control_kernel   (one thread) promotes the vertices found last level to the frontier, stops when it is
//                    empty or max_depth is reached, and picks the direction from the frontier's edge count
//   top_down_kernel  (push) a warp per frontier vertex claims unvisited out-neighbours (atomicCAS on distance)
//   bottom_up_kernel (pull) a thread per unvisited vertex looks for an in-neighbour in the frontier
// Found vertices are appended to the next frontier with their out-degrees (the edge count the switch reads).
// The host reads the done flag once per batch of levels. Distances are exact; parents are made the smallest
// candidate (atomicMin when pushing, the whole in-list when pulling) when `deterministic`.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/graph/bfs/bfs_launch.h"
#include "prim/device/merge_path/csr_check.cuh"
#include "prim/device/merge_path/merge_path.h"
#include "prim/util/cuda_check.h"
#include "prim/util/dispatch.h"
#include "prim/util/launch.h"
#include "prim/warp/aggregate.cuh"

namespace gpuprim {
namespace {

constexpr int kThreads = kBlockThreads;
constexpr int64_t kNoParent = std::numeric_limits<int64_t>::max();  // until the end: atomicMin's identity

// Direction switch (Beamer et al.'s heuristic, their constants): pull once the frontier's out-edges exceed
// the unexplored edges / kPullAlpha; push again once the frontier is below vertices / kPushBeta.
struct BfsTuning {
  static constexpr int64_t kPullAlpha = 14;
  static constexpr int64_t kPushBeta = 24;
  static constexpr int64_t kFirstDepth = 16;  // depth searched before the first read of the done flag
};

struct Control {
  int64_t level;             // the frontier's distance
  int64_t frontier_size, frontier_edges;
  unsigned long long next_size, next_edges;  // being appended to by this level's kernels
  int64_t unexplored_edges;  // out-edges of the vertices not yet reached
  int32_t cur;               // the queue holding the frontier (0 or 1)
  int32_t bottom_up;         // direction of this level's expansion
  int32_t done;
};

template <typename I>
struct Graph {
  const I* crow;
  const I* col;
  const I* crow_t;
  const I* col_t;
  int64_t vertices, edges;
};

template <typename I>
__device__ __forceinline__ int64_t degree(const I* crow, int64_t v, int64_t edges) {
  return merge_path::clamped_offset(crow, v + 1, edges) - merge_path::clamped_offset(crow, v, edges);
}

template <typename I>
__device__ __forceinline__ void append(Control* control, I* next, const I* crow, int64_t v, int64_t edges) {
  const unsigned long long slot = warp::aggregated_increment(&control->next_size);
  next[slot] = static_cast<I>(v);
  warp::aggregated_add(&control->next_edges, static_cast<unsigned long long>(degree(crow, v, edges)));
}

template <typename I>
__global__ void __launch_bounds__(kThreads) init_kernel(Graph<I> g, InputCheck crow_check, int32_t* distance,
                                                        int64_t* parent, Control* control) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v <= g.vertices; v += stride) {
    if (v < g.vertices) {
      distance[v] = -1;
      parent[v] = kNoParent;
    }
    merge_path::check_crow_entry(crow_check, g.crow, v, g.vertices, g.edges);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *control = Control{-1, 0, 0, 0ull, 0ull, g.edges, 1, 0, 0};
}

// Sources go to queue 0 as the "found" vertices that control_kernel promotes to the frontier of level 0.
template <typename I>
__global__ void __launch_bounds__(kThreads) sources_kernel(Graph<I> g, const int64_t* sources, int64_t count,
                                                           InputCheck source_check, int32_t* distance,
                                                           int64_t* parent, I* queue0, Control* control) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t s = sources[i];
    if (s < 0 || s >= g.vertices) {
      record_input_error(source_check, i, s);
      continue;
    }
    if (atomicCAS(&distance[s], -1, 0) == -1) {
      parent[s] = s;
      append(control, queue0, g.crow, s, g.edges);
    }
  }
}

__global__ void control_kernel(Control* control, int64_t vertices, int64_t max_depth, BfsDirection direction) {
  Control c = *control;
  if (c.done) return;
  c.level += 1;
  c.cur ^= 1;
  c.frontier_size = static_cast<int64_t>(c.next_size);
  c.frontier_edges = static_cast<int64_t>(c.next_edges);
  c.unexplored_edges -= c.frontier_edges;
  c.next_size = 0;
  c.next_edges = 0;
  if (c.frontier_size == 0 || c.level >= max_depth) {
    c.done = 1;
  } else if (direction == BfsDirection::kTopDown) {
    c.bottom_up = 0;
  } else if (direction == BfsDirection::kBottomUp) {
    c.bottom_up = 1;
  } else if (!c.bottom_up) {
    c.bottom_up = c.frontier_edges > c.unexplored_edges / BfsTuning::kPullAlpha;
  } else {
    c.bottom_up = c.frontier_size >= vertices / BfsTuning::kPushBeta;
  }
  *control = c;
}

template <typename I>
__global__ void __launch_bounds__(kThreads) top_down_kernel(Graph<I> g, bool deterministic, InputCheck col_check,
                                                            int32_t* distance, int64_t* parent, I* queue0,
                                                            I* queue1, Control* control) {
  if (control->done || control->bottom_up) return;
  const int64_t size = control->frontier_size;
  const int32_t next_level = static_cast<int32_t>(control->level + 1);
  const I* frontier = control->cur == 0 ? queue0 : queue1;
  I* next = control->cur == 0 ? queue1 : queue0;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / kWarpSize);
  for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize; i < size; i += warps) {
    const int64_t u = static_cast<int64_t>(frontier[i]);
    const int64_t begin = merge_path::clamped_offset(g.crow, u, g.edges);
    const int64_t end = std::max(begin, merge_path::clamped_offset(g.crow, u + 1, g.edges));
    for (int64_t k = begin + lane; k < end; k += kWarpSize) {
      const int64_t v = static_cast<int64_t>(g.col[k]);
      if (v < 0 || v >= g.vertices) {
        record_input_error(col_check, k, v);
        continue;
      }
      const int32_t seen = distance[v];
      if (seen != -1 && (!deterministic || seen != next_level)) continue;
      const int32_t old = seen == -1 ? atomicCAS(&distance[v], -1, next_level) : seen;
      if (old == -1) {
        if (!deterministic) parent[v] = u;
        append(control, next, g.crow, v, g.edges);
      }
      if (deterministic && (old == -1 || old == next_level)) {
        atomicMin(reinterpret_cast<unsigned long long*>(&parent[v]), static_cast<unsigned long long>(u));
      }
    }
  }
}

template <typename I>
__global__ void __launch_bounds__(kThreads) bottom_up_kernel(Graph<I> g, bool deterministic, bool sorted,
                                                             InputCheck col_check, int32_t* distance,
                                                             int64_t* parent, I* queue0, I* queue1,
                                                             Control* control) {
  if (control->done || !control->bottom_up) return;
  const int32_t level = static_cast<int32_t>(control->level);
  I* next = control->cur == 0 ? queue1 : queue0;
  const bool first_is_smallest = !deterministic || sorted;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < g.vertices;
       v += int64_t(gridDim.x) * blockDim.x) {
    if (distance[v] != -1) continue;
    const int64_t begin = merge_path::clamped_offset(g.crow_t, v, g.edges);
    const int64_t end = std::max(begin, merge_path::clamped_offset(g.crow_t, v + 1, g.edges));
    int64_t best = kNoParent;
    for (int64_t k = begin; k < end; ++k) {
      const int64_t u = static_cast<int64_t>(g.col_t[k]);
      if (u < 0 || u >= g.vertices) {
        record_input_error(col_check, k, u);
        continue;
      }
      if (distance[u] != level || u >= best) continue;  // distance[u] never becomes `level` during this pass
      best = u;
      if (first_is_smallest) break;
    }
    if (best != kNoParent) {
      distance[v] = level + 1;
      parent[v] = best;
      append(control, next, g.crow, v, g.edges);
    }
  }
}

__global__ void __launch_bounds__(kThreads) finish_kernel(int64_t vertices, int64_t* parent) {
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < vertices; v += int64_t(gridDim.x) * blockDim.x) {
    if (parent[v] == kNoParent) parent[v] = -1;
  }
}

template <typename I>
void run(const BfsGraph& graph, const int64_t* sources, int64_t num_sources, int64_t max_depth,
         BfsDirection direction, bool deterministic, const InputCheck& source_check, const InputCheck& col_check,
         int32_t* distance, int64_t* parent, Workspace& workspace, cudaStream_t stream) {
  const Graph<I> g{static_cast<const I*>(graph.crow), static_cast<const I*>(graph.col),
                   static_cast<const I*>(graph.crow_t != nullptr ? graph.crow_t : graph.crow),
                   static_cast<const I*>(graph.col_t != nullptr ? graph.col_t : graph.col), graph.vertices,
                   graph.edges};
  if (graph.crow_t == nullptr) direction = BfsDirection::kTopDown;
  const int64_t vertices = graph.vertices;
  auto* control = static_cast<Control*>(workspace.allocate(sizeof(Control)));
  I* queue0 = static_cast<I*>(workspace.allocate(sizeof(I) * std::max<int64_t>(vertices, 1)));
  I* queue1 = static_cast<I*>(workspace.allocate(sizeof(I) * std::max<int64_t>(vertices, 1)));
  InputCheck crow_check = col_check;
  crow_check.argument = InputArg::kCrow;
  crow_check.rule = InputRule::kNotAtEnd;
  crow_check.bound = graph.edges;
  init_kernel<I><<<grid_for(vertices + 1, kThreads), kThreads, 0, stream>>>(g, crow_check, distance, parent, control);
  GPUPRIM_LAUNCH_CHECK();
  if (num_sources > 0) {
    sources_kernel<I><<<grid_for(num_sources, kThreads), kThreads, 0, stream>>>(g, sources, num_sources, source_check,
                                                                                distance, parent, queue0, control);
    GPUPRIM_LAUNCH_CHECK();
  }
  auto top_down = top_down_kernel<I>;
  auto bottom_up = bottom_up_kernel<I>;
  const unsigned top_down_grid = grid_for(vertices, kThreads / kWarpSize, resident_blocks(top_down, kThreads));
  const unsigned bottom_up_grid = grid_for(vertices, kThreads, resident_blocks(bottom_up, kThreads));
  // Level L's control launch stops the search once L >= max_depth: no more launches are needed after it.
  const int64_t level_bound = std::min<int64_t>(max_depth, vertices) + 1;
  int64_t queued = 0;
  for (int64_t batch = BfsTuning::kFirstDepth + 1; queued < level_bound; batch *= 2) {  // + 1: level 0 too
    for (int64_t i = 0; i < batch && queued < level_bound; ++i, ++queued) {
      control_kernel<<<1, 1, 0, stream>>>(control, vertices, max_depth, direction);
      GPUPRIM_LAUNCH_CHECK();
      top_down<<<top_down_grid, kThreads, 0, stream>>>(g, deterministic, col_check, distance, parent, queue0,
                                                        queue1, control);
      GPUPRIM_LAUNCH_CHECK();
      if (direction != BfsDirection::kTopDown) {
        bottom_up<<<bottom_up_grid, kThreads, 0, stream>>>(g, deterministic, graph.in_edges_sorted, col_check,
                                                            distance, parent, queue0, queue1, control);
        GPUPRIM_LAUNCH_CHECK();
      }
    }
    if (queued >= level_bound) break;  // finished by construction: no need to look
    int32_t done = 0;
    GPUPRIM_CUDA_CHECK(cudaMemcpyAsync(&done, &control->done, sizeof(done), cudaMemcpyDeviceToHost, stream));
    GPUPRIM_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (done) break;
  }
  finish_kernel<<<grid_for(vertices, kThreads), kThreads, 0, stream>>>(vertices, parent);
  GPUPRIM_LAUNCH_CHECK();
}

}  // namespace

void bfs_cuda_launch(const BfsGraph& graph, const int64_t* sources, int64_t num_sources, int64_t max_depth,
                     BfsDirection direction, bool deterministic, const InputCheck& source_check,
                     const InputCheck& col_check, int32_t* distance, int64_t* parent, Workspace& workspace,
                     cudaStream_t stream) {
  if (graph.vertices == 0) return;
  dispatch<IndexTypes>("bfs", graph.index_type, [&](auto tag) {
    using I = typename decltype(tag)::type;
    run<I>(graph, sources, num_sources, max_depth, direction, deterministic, source_check, col_check, distance,
           parent, workspace, stream);
  });
}

}  // namespace gpuprim
