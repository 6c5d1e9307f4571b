"""spmm F = 1 kernel variants timed alternately in one process on bench_spmm's graphs (compare/spmm_tile_read_ahead.md).

Needs an experiment build whose launcher picks the variant from GPUPRIM_SPMM_AHEAD (and GPUPRIM_SPMM_AHEAD_ITEMS) at
each call; main has no such switch. Every variant's output is checked bitwise against variant 0's, then each round
times every variant (the order reversed every other round), torch.sparse_csr @ x and a copy of the bytes.
Run from the checkout: PYTHONPATH=torch_ops OUT=dir [ROUNDS=3] [GRAPHS=poisson27,rmat,power_law] python3 <this file>
"""
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, "benchmarks")
import bench_spmm  # noqa: E402
import gpuprim  # noqa: E402
import timing  # noqa: E402

# (name, GPUPRIM_SPMM_AHEAD, GPUPRIM_SPMM_AHEAD_ITEMS). The compare file's run had main, registers ("1", "0") and the
# L2 prefetch at 256 / 512 / 1024; the batch variants ("3", "4") are the patch's kernel at 4 / 3 blocks an SM.
VARIANTS = [("main", "0", "0"), ("l2_256", "2", "256"), ("batch4", "3", "0"), ("batch3", "4", "0")]
ROUNDS = int(os.environ.get("ROUNDS", "3"))


def use(variant):
    os.environ["GPUPRIM_SPMM_AHEAD"] = variant[1]
    os.environ["GPUPRIM_SPMM_AHEAD_ITEMS"] = variant[2]


def measure(graph):
    crow, col, n = bench_spmm._graph(graph, False)
    nnz = col.numel()
    g = torch.Generator(device="cuda").manual_seed(1)
    values = torch.randint(-1, 2, (nnz,), generator=g, device="cuda").float()
    x = torch.randn(n, 1, generator=g, device="cuda")
    use(VARIANTS[0])
    weighted = gpuprim.spmm(crow, col, values, x)
    unweighted = gpuprim.spmm(crow, col, None, x)
    for variant in VARIANTS[1:]:
        use(variant)
        assert torch.equal(gpuprim.spmm(crow, col, values, x), weighted), (graph, variant)
        assert torch.equal(gpuprim.spmm(crow, col, None, x), unweighted), (graph, variant)
    a = torch.sparse_csr_tensor(crow, col, values, (crow.numel() - 1, n))
    bytes_moved = nnz * 8 + crow.numel() * 4 + n * 4 * 2
    source = torch.empty(bytes_moved // 2, dtype=torch.uint8, device="cuda")
    destination = torch.empty_like(source)
    times = {}
    for r in range(ROUNDS):
        for variant in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
            use(variant)
            name = variant[0]
            times.setdefault(name, []).append(timing.bench(lambda: gpuprim.spmm(crow, col, values, x))["median_ms"])
            times.setdefault(name + "_unw", []).append(
                timing.bench(lambda: gpuprim.spmm(crow, col, None, x))["median_ms"])
        times.setdefault("torch", []).append(timing.bench(lambda: a @ x)["median_ms"])
        times.setdefault("copy", []).append(timing.bench(lambda: destination.copy_(source))["median_ms"])
    median = {k: statistics.median(t) for k, t in times.items()}
    print(f"== {graph} nnz {nnz} bytes {bytes_moved / 1e9:.2f} GB: torch {median['torch']:.3f} ms "
          f"copy {median['copy']:.3f}")
    for k, t in median.items():
        base = median.get("main_unw" if k.endswith("_unw") else "main", t)
        print(f"  {k:12s} {t:.3f} ms  vs torch {median['torch'] / t:.2f}x  vs main {t / base - 1:+.1%}  "
              f"copy% {median['copy'] / t:.0%}  rounds {' '.join(f'{v:.3f}' for v in times[k])}", flush=True)
    return dict(times=times, median=median, nnz=nnz, bytes=bytes_moved)


def main():
    out = {}
    for graph in os.environ.get("GRAPHS", "poisson27,rmat,power_law").split(","):
        out[graph] = measure(graph)
        bench_spmm._graphs.clear()
        torch.cuda.empty_cache()
    with open(os.path.join(os.environ.get("OUT", "."), "spmm_ahead.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
