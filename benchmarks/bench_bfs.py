"""gpuprim.bfs on Graph500 Kronecker graphs (scale 22, 24, 26, edge factor 16), 64 roots, in GTEPS.

python3 benchmarks/bench_bfs.py --out DIR [--quick]

Rows per scale: gpuprim (direction-optimizing), gpuprim_top_down (the op's push-only mode) and torch_level_sync
(a pure-PyTorch level-synchronous BFS: frontier as a tensor, index_select + scatter). Times are medians over the
roots of one search each (CUDA events, L2 flushed); gteps = the harmonic mean over roots of (undirected edges in
the searched component) / time, as Graph500 reports. Targets: gpuprim >= 10x torch_level_sync, and
direction-optimizing >= 3x top-down at scale 26. Every search is validated (Graph500 rules) before timing.
The anchor runs fewer roots (it is slow); its GTEPS is over those.
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import torch

import gpuprim
import timing

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from graphs import bfs_reference, kronecker_graph, validate_bfs  # noqa: E402

OP = "bfs"
ROOTS = 64
ANCHOR_ROOTS = 8


def _time_roots(fn: Callable[[int], object], roots: List[int], edges: List[int]) -> Tuple[dict, float]:
    times = []
    for root in roots:
        t = timing.bench(lambda: fn(root), warmup=1, reps=3)
        times.append(t["median_ms"])
    gteps = len(roots) / sum(ms * 1e-3 / (e / 1e9) for ms, e in zip(times, edges))  # harmonic mean of edges / s
    ordered = sorted(times)
    summary = {"median_ms": statistics.median(times), "min_ms": ordered[0], "p20": ordered[len(ordered) // 5],
               "p80": ordered[(4 * len(ordered)) // 5], "reps": len(times)}
    return summary, gteps


def _component_edges(crow: torch.Tensor, dist: torch.Tensor) -> int:
    degrees = (crow[1:] - crow[:-1]).long()
    return int(degrees[dist >= 0].sum()) // 2


def _measure(case: str, scale: int, quick: bool) -> List[timing.Row]:
    crow, col = kronecker_graph(scale, 16, seed=scale, device=timing.DEVICE,
                                index_dtype=torch.int64 if scale >= 26 else torch.int32)
    degrees = crow[1:] - crow[:-1]
    candidates = torch.nonzero(degrees > 0).flatten()
    g = torch.Generator().manual_seed(scale)
    roots = candidates[torch.randint(0, candidates.numel(), (ROOTS if not quick else 8,), generator=g)].tolist()
    edges = []
    with gpuprim.deterministic(False):
        for i, root in enumerate(roots):
            dist, parent = gpuprim.bfs(crow, col, root, symmetric=True)
            if i < 2:  # the full check is slow at scale 26: two roots, every rule
                expected, _ = bfs_reference(crow, col, [root])
                validate_bfs(crow, col, [root], dist, parent, expected)
            edges.append(_component_edges(crow, dist))
    bytes_moved = crow.numel() * crow.element_size() + col.numel() * col.element_size()
    common = dict(bytes_moved=bytes_moved, shape=[crow.numel() - 1, col.numel()], dtype=col.dtype)
    rows = []
    with gpuprim.deterministic(False):
        for impl, direction in (("gpuprim", "auto"), ("gpuprim_top_down", "top_down")):
            summary, gteps = _time_roots(lambda r: gpuprim.bfs(crow, col, r, direction=direction, symmetric=True),
                                         roots, edges)
            rows.append(timing.record(OP, case, impl, summary, gteps=gteps, **common))
    few = roots[:ANCHOR_ROOTS]
    summary, gteps = _time_roots(lambda r: bfs_reference(crow, col, [r]), few, edges[:len(few)])
    rows.append(timing.record(OP, case, "torch_level_sync", summary, gteps=gteps, **common))
    return rows


def cases(quick: bool) -> List[dict]:
    shrink = timing.size_divisor(quick).bit_length() - 1
    return [dict(case=f"kronecker{s - shrink}_ef16", scale=s - shrink, quick=quick) for s in (22, 24, 26)]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
