"""Where an op's GPU time goes: per-kernel times (torch.profiler) on the benchmarks' inputs.

python3 benchmarks/kernel_times.py bfs  [--scales 22,24]           kernels in launch order, one search a scale
python3 benchmarks/kernel_times.py spmm [--graphs poisson27,rmat,power_law] [--features 1]
                                                                   per kernel name, mean over 5 calls
python3 benchmarks/kernel_times.py embedding_bag [--ids all_equal,zipf,uniform] [--mode sum]
                                                                   forward, 1M x 128 fp32, 65536 bags of 20: per
                                                                   kernel name, mean over 50 calls, and the
                                                                   back-to-back time a call

Runs against whichever gpuprim is on PYTHONPATH (another tree's torch_ops, to compare two builds).

Not a benchmark (no L2 flush, one call under the profiler): it says which kernel or level to work on; the
benchmarks say whether the work paid.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Callable, List

import torch

import gpuprim

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from graphs import kronecker_graph  # noqa: E402


def _kernels(fn: Callable[[], object], calls: int) -> List[tuple]:
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    events.sort(key=lambda e: e.time_range.start)
    return [(e.name, e.device_time, e.time_range.start) for e in events]


def _short(name: str) -> str:
    name = name.replace("(anonymous namespace)", "")  # its "(" is not the parameter list's
    return name.split("<")[0].split("(")[0].replace("void ", "").split("::")[-1]


def bfs(scales: List[int]) -> None:
    for scale in scales:
        crow, col = kronecker_graph(scale, 16, seed=scale, device="cuda", index_dtype=torch.int32)
        candidates = torch.nonzero(crow[1:] > crow[:-1]).flatten()
        g = torch.Generator().manual_seed(scale)
        root = int(candidates[torch.randint(0, candidates.numel(), (1,), generator=g)])
        with gpuprim.deterministic(False):
            dist, _ = gpuprim.bfs(crow, col, root, symmetric=True)
            degrees = (crow[1:] - crow[:-1]).long()
            levels = [(int((dist == d).sum()), int(degrees[dist == d].sum())) for d in range(int(dist.max()) + 1)]
            print(f"scale {scale}: root {root}; level (vertices, out-edges): {levels}")
            rows = _kernels(lambda: gpuprim.bfs(crow, col, root, symmetric=True), 1)
        first = rows[0][2] if rows else 0.0
        for name, us, start in rows:
            print(f"  {_short(name):28s} {us:9.1f} us  at {start - first:9.1f} us")
        span = rows[-1][2] + rows[-1][1] - first if rows else 0.0
        print(f"  kernels {sum(r[1] for r in rows):.1f} us of a {span:.1f} us span")
        del crow, col
        torch.cuda.empty_cache()


def spmm(graphs: List[str], features: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_spmm  # noqa: E402 - its graph builders

    for graph in graphs:
        crow, col, n = bench_spmm._graph(graph, False)
        values = torch.ones(col.numel(), device="cuda")
        x = torch.randn(n, features, device="cuda")
        calls = 5
        totals: dict = defaultdict(float)
        for name, us, _ in _kernels(lambda: gpuprim.spmm(crow, col, values, x), calls):
            totals[_short(name)] += us / calls
        print(f"{graph} F={features}: " + ", ".join(f"{k} {v:.1f} us" for k, v in sorted(totals.items(),
                                                                                    key=lambda kv: -kv[1])))


def embedding_bag(ids: List[str], mode: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import distributions  # noqa: E402 - the benchmarks' id distributions

    rows, d, bag = 1 << 20, 128, 20
    n = 65536 * bag
    weight = torch.randn(rows, d, device="cuda")
    offsets = distributions.bag_offsets(n, bag, 0)
    for kind in ids:
        indices = distributions.ids(kind, rows, n)
        calls = 50
        totals: dict = defaultdict(float)
        for name, us, _ in _kernels(lambda: gpuprim.embedding_bag(weight, indices, offsets, mode), calls):
            totals[_short(name)] += us / calls
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(200):
            gpuprim.embedding_bag(weight, indices, offsets, mode)
        end.record()
        torch.cuda.synchronize()
        print(f"{kind} {mode}: {start.elapsed_time(end) / 200 * 1000:.1f} us a call back to back; "
              + ", ".join(f"{k} {v:.1f} us" for k, v in sorted(totals.items(), key=lambda kv: -kv[1])))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("op", choices=["bfs", "spmm", "embedding_bag"])
    parser.add_argument("--scales", default="22,24")
    parser.add_argument("--graphs", default="poisson27,rmat,power_law")
    parser.add_argument("--features", type=int, default=1)
    parser.add_argument("--ids", default="all_equal,zipf,uniform")
    parser.add_argument("--mode", default="sum")
    args = parser.parse_args()
    if args.op == "bfs":
        bfs([int(s) for s in args.scales.split(",")])
    elif args.op == "spmm":
        spmm(args.graphs.split(","), args.features)
    else:
        embedding_bag(args.ids.split(","), args.mode)


if __name__ == "__main__":
    main()
