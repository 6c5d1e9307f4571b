// Launcher of gpuprim::bfs: a level-synchronous, direction-optimizing breadth-first search whose control
// lives on the device. Each level is three launches the host queues without looking at results:
//   control_kernel   (one thread) promotes the vertices found last level to the frontier, stops when it is
//                    empty or max_depth is reached, and picks the direction from the frontier's edge count
//   top_down_kernel  (push) claims the frontier's unvisited out-neighbours (atomicCAS on distance): a warp a
//                    vertex of the queue, a warp an edge chunk of the high-degree vertices' work list
//   bottom_up_kernel (pull) a thread per unvisited vertex looks for an in-neighbour in the frontier
// Found vertices are appended to the next frontier with their out-degrees (the edge count the switch reads):
// to its queue, or, above kLongDegree, to its work list, so that a hub's edges are spread over the grid.
// The host reads the done flag once per batch of levels. Distances are exact; parents are made the smallest
// candidate (atomicMin when pushing, the whole in-list when pulling) when `deterministic`.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/graph/bfs/bfs_launch.h"
#include "prim/device/merge_path/csr_check.cuh"
#include "prim/device/merge_path/merge_path.h"
#include "prim/device/merge_path/work_list.cuh"
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
  static constexpr int64_t kLongDegree = 256;  // frontier vertices above this out-degree are cut into chunks
  static constexpr int kEdgeChunk = 256;       // edges a warp claims at once: kLoads a lane, loaded together
  static constexpr int kLoads = kEdgeChunk / kWarpSize;
};

struct Control {
  int64_t level;             // the frontier's distance
  int64_t frontier_size, frontier_edges;
  int64_t frontier_queued;                   // the frontier's vertices in its queue (the rest: its work list)
  unsigned long long next_size, next_edges;  // appended to this level: the next queue's length, frontier's edges
  unsigned long long long_counter[2];        // each frontier's work list counter (merge_path::WorkList)
  int64_t unexplored_edges;  // out-edges of the vertices not yet reached
  int32_t cur;               // which of the two frontiers (queue and work list) is being expanded
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

// The two frontiers (current and next swap each level): a queue of vertices and a work list of high-degree ones.
template <typename I>
struct Frontiers {
  I* queue[2];
  int64_t* long_vertex[2];
  int64_t* long_first_chunk[2];
  int64_t long_capacity, long_slots;

  __device__ __forceinline__ merge_path::WorkList list(Control* control, int which) const {
    return {&control->long_counter[which], long_vertex[which], long_first_chunk[which], long_capacity, long_slots};
  }
};

template <typename I>
__device__ __forceinline__ int64_t degree(const I* crow, int64_t v, int64_t edges) {
  return merge_path::clamped_offset(crow, v + 1, edges) - merge_path::clamped_offset(crow, v, edges);
}

// v joins frontier `which` (the next one) with its out-degree.
template <typename I>
__device__ __forceinline__ void append(Control* control, const Frontiers<I>& frontiers, int which, const I* crow,
                                       int64_t v, int64_t edges) {
  const int64_t d = degree(crow, v, edges);
  if (d > BfsTuning::kLongDegree) {
    frontiers.list(control, which).push(v, d, BfsTuning::kEdgeChunk);
  } else {
    frontiers.queue[which][warp::aggregated_increment(&control->next_size)] = static_cast<I>(v);
  }
  warp::aggregated_add(&control->next_edges, static_cast<unsigned long long>(d));
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
  if (blockIdx.x == 0 && threadIdx.x == 0) *control = Control{-1, 0, 0, 0, 0ull, 0ull, {0ull, 0ull}, g.edges, 1, 0, 0};
}

// Sources go to frontier 0 as the "found" vertices that control_kernel promotes to the frontier of level 0.
template <typename I>
__global__ void __launch_bounds__(kThreads) sources_kernel(Graph<I> g, const int64_t* sources, int64_t count,
                                                           InputCheck source_check, int32_t* distance,
                                                           int64_t* parent, Frontiers<I> frontiers, Control* control) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t s = sources[i];
    if (s < 0 || s >= g.vertices) {
      record_input_error(source_check, i, s);
      continue;
    }
    if (atomicCAS(&distance[s], -1, 0) == -1) {
      parent[s] = s;
      append(control, frontiers, 0, g.crow, s, g.edges);
    }
  }
}

__global__ void control_kernel(Control* control, int64_t vertices, int64_t max_depth, BfsDirection direction) {
  Control c = *control;
  if (c.done) return;
  c.level += 1;
  c.cur ^= 1;
  c.frontier_queued = static_cast<int64_t>(c.next_size);
  c.frontier_size = c.frontier_queued + static_cast<int64_t>(c.long_counter[c.cur] >> 32);
  c.frontier_edges = static_cast<int64_t>(c.next_edges);
  c.unexplored_edges -= c.frontier_edges;
  c.next_size = 0;
  c.next_edges = 0;
  c.long_counter[c.cur ^ 1] = 0;
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

// Items of a level: the queue's vertices (all of a vertex's edges), then the work list's chunk slots.
template <typename I>
__global__ void __launch_bounds__(kThreads) top_down_kernel(Graph<I> g, bool deterministic, InputCheck col_check,
                                                            int32_t* distance, int64_t* parent,
                                                            Frontiers<I> frontiers, Control* control) {
  if (control->done || control->bottom_up) return;
  const int cur = control->cur;
  const int64_t queued = control->frontier_queued;
  const merge_path::WorkList list = frontiers.list(control, cur);
  const int64_t entries = list.entries();
  const int64_t items = queued + list.slots();
  const int32_t next_level = static_cast<int32_t>(control->level + 1);
  const I* frontier = frontiers.queue[cur];
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (kThreads / kWarpSize);
  for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize; i < items; i += warps) {
    int64_t u, begin, end;  // warp-uniform: edges [begin, end) of u
    if (i < queued) {
      u = static_cast<int64_t>(frontier[i]);
      begin = merge_path::clamped_offset(g.crow, u, g.edges);
      end = std::max(begin, merge_path::clamped_offset(g.crow, u + 1, g.edges));
    } else {
      const int64_t slot = i - queued;
      const int64_t e = list.entry_of(slot, entries);
      u = list.item[e];
      if (u < 0) continue;  // dropped (bad offsets)
      const int64_t row = merge_path::clamped_offset(g.crow, u, g.edges);
      begin = row + (slot - list.first_chunk[e]) * BfsTuning::kEdgeChunk;
      end = std::min<int64_t>(begin + BfsTuning::kEdgeChunk,
                              std::max(row, merge_path::clamped_offset(g.crow, u + 1, g.edges)));
    }
    for (int64_t base = begin; base < end; base += BfsTuning::kEdgeChunk) {
      int64_t v[BfsTuning::kLoads];
      int32_t seen[BfsTuning::kLoads];
#pragma unroll
      for (int j = 0; j < BfsTuning::kLoads; ++j) {  // the chunk's columns, then their distances, all in flight
        const int64_t k = base + lane + j * kWarpSize;
        v[j] = k < end ? static_cast<int64_t>(g.col[k]) : -1;
      }
#pragma unroll
      for (int j = 0; j < BfsTuning::kLoads; ++j) {
        const int64_t k = base + lane + j * kWarpSize;
        if (k < end && (v[j] < 0 || v[j] >= g.vertices)) {
          record_input_error(col_check, k, v[j]);
          v[j] = -1;
        }
        seen[j] = v[j] >= 0 ? distance[v[j]] : 0;
      }
#pragma unroll
      for (int j = 0; j < BfsTuning::kLoads; ++j) {
        if (v[j] < 0 || (seen[j] != -1 && (!deterministic || seen[j] != next_level))) continue;
        const int32_t old = seen[j] == -1 ? atomicCAS(&distance[v[j]], -1, next_level) : seen[j];
        if (old == -1) {
          if (!deterministic) parent[v[j]] = u;
          append(control, frontiers, cur ^ 1, g.crow, v[j], g.edges);
        }
        if (deterministic && (old == -1 || old == next_level)) {
          atomicMin(reinterpret_cast<unsigned long long*>(&parent[v[j]]), static_cast<unsigned long long>(u));
        }
      }
    }
  }
}

template <typename I>
__global__ void __launch_bounds__(kThreads) bottom_up_kernel(Graph<I> g, bool deterministic, bool sorted,
                                                             InputCheck col_check, int32_t* distance,
                                                             int64_t* parent, Frontiers<I> frontiers,
                                                             Control* control) {
  if (control->done || !control->bottom_up) return;
  const int32_t level = static_cast<int32_t>(control->level);
  const int next = control->cur ^ 1;
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
      append(control, frontiers, next, g.crow, v, g.edges);
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
  // A vertex in a work list has more than kLongDegree out-edges: that bounds the lists' entries.
  const int64_t long_capacity = std::min(vertices, graph.edges / (BfsTuning::kLongDegree + 1)) + 1;
  Frontiers<I> frontiers;
  frontiers.long_capacity = long_capacity;
  frontiers.long_slots = graph.edges / BfsTuning::kEdgeChunk + long_capacity;  // sum of ceil(degree / chunk)
  for (int which = 0; which < 2; ++which) {
    frontiers.queue[which] = static_cast<I*>(workspace.allocate(sizeof(I) * std::max<int64_t>(vertices, 1)));
    frontiers.long_vertex[which] = static_cast<int64_t*>(workspace.allocate(sizeof(int64_t) * 2 * long_capacity));
    frontiers.long_first_chunk[which] = frontiers.long_vertex[which] + long_capacity;
  }
  InputCheck crow_check = col_check;
  crow_check.argument = InputArg::kCrow;
  crow_check.rule = InputRule::kNotAtEnd;
  crow_check.bound = graph.edges;
  init_kernel<I><<<grid_for(vertices + 1, kThreads), kThreads, 0, stream>>>(g, crow_check, distance, parent, control);
  GPUPRIM_LAUNCH_CHECK();
  if (num_sources > 0) {
    sources_kernel<I><<<grid_for(num_sources, kThreads), kThreads, 0, stream>>>(g, sources, num_sources, source_check,
                                                                                distance, parent, frontiers, control);
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
      top_down<<<top_down_grid, kThreads, 0, stream>>>(g, deterministic, col_check, distance, parent, frontiers,
                                                        control);
      GPUPRIM_LAUNCH_CHECK();
      if (direction != BfsDirection::kTopDown) {
        bottom_up<<<bottom_up_grid, kThreads, 0, stream>>>(g, deterministic, graph.in_edges_sorted, col_check,
                                                            distance, parent, frontiers, control);
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
