"""gpuprim.spmm vs torch.sparse_csr @ x (cuSPARSE) on a 3-D Poisson matrix, an RMAT graph and a power-law graph.

python3 benchmarks/bench_spmm.py --out DIR [--quick]

Bytes per call = values + col + crow read, x read once, y written (the least any SpMM must move). The issue's
targets, same run: the 27-point Poisson matrix (~16M rows) at F = 1 >= 80% of copy bandwidth (pct_copy; the
"copy" row times a copy of the same bytes); the RMAT scale-24 graph >= 1.3x torch's sparse product; never below
0.95x of torch on any case (F = 1, 32, 128; power-law rows). Values and x are small integers, so every order
gives the same sums: gpuprim must equal torch bit for bit before it is timed.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import torch

import gpuprim
import timing

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from graphs import coo_to_csr, kronecker_edges, power_law_lengths  # noqa: E402

OP = "spmm"
POISSON_ROWS = 1 << 24  # 252^3 ~ 16M rows, 27 nonzeros each
RMAT_SCALE = 24
POWER_LAW_ROWS = 1 << 22

_graphs: Dict[str, Tuple[torch.Tensor, torch.Tensor, int]] = {}


def _poisson27(rows: int) -> Tuple[torch.Tensor, torch.Tensor, int]:
    n = round(rows ** (1 / 3))
    idx = torch.arange(n ** 3, device=timing.DEVICE, dtype=torch.int64)
    x, y, z = idx % n, (idx // n) % n, idx // (n * n)
    neighbours = []
    for dz in (-1, 0, 1):  # increasing linear offset: each row's columns come out sorted
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                ok = ((x + dx >= 0) & (x + dx < n) & (y + dy >= 0) & (y + dy < n) & (z + dz >= 0) & (z + dz < n))
                neighbours.append(torch.where(ok, idx + dx + dy * n + dz * n * n, -1).to(torch.int32))
    table = torch.stack(neighbours, 1)
    del neighbours
    valid = table >= 0
    crow = torch.zeros(n ** 3 + 1, dtype=torch.int64, device=timing.DEVICE)
    crow[1:] = valid.sum(1).cumsum(0)
    col = table[valid]
    return crow.to(torch.int32), col, n ** 3


def _rmat(scale: int) -> Tuple[torch.Tensor, torch.Tensor, int]:
    g = torch.Generator(device=timing.DEVICE).manual_seed(24)
    src, dst = kronecker_edges(scale, 16, g, timing.DEVICE)
    crow, col = coo_to_csr(torch.cat([src, dst]), torch.cat([dst, src]), 1 << scale, torch.int32)
    return crow, col, 1 << scale


def _power_law(rows: int) -> Tuple[torch.Tensor, torch.Tensor, int]:
    g = torch.Generator().manual_seed(7)
    lengths = power_law_lengths(rows, 16.0, g).to(timing.DEVICE)
    crow = torch.zeros(rows + 1, dtype=torch.int64, device=timing.DEVICE)
    crow[1:] = lengths.cumsum(0)
    gd = torch.Generator(device=timing.DEVICE).manual_seed(8)
    col = torch.randint(0, rows, (int(crow[-1]),), generator=gd, device=timing.DEVICE, dtype=torch.int32)
    return crow.to(torch.int32), col, rows


def _graph(name: str, quick: bool) -> Tuple[torch.Tensor, torch.Tensor, int]:
    if name not in _graphs:
        _graphs.clear()
        timing.free_memory()
        shrink = timing.size_divisor(quick)
        if name == "poisson27":
            _graphs[name] = _poisson27(POISSON_ROWS // shrink)
        elif name == "rmat":
            _graphs[name] = _rmat(RMAT_SCALE - int(math.log2(shrink)))
        else:
            _graphs[name] = _power_law(POWER_LAW_ROWS // shrink)
    return _graphs[name]


def _measure(case: str, graph: str, features: int, dtype: torch.dtype, quick: bool) -> List[timing.Row]:
    crow, col, n = _graph(graph, quick)
    nnz = col.numel()
    g = torch.Generator(device=timing.DEVICE).manual_seed(features)
    values = torch.randint(-1, 2, (nnz,), generator=g, device=timing.DEVICE).to(dtype)
    x = torch.randint(-2, 3, (n, features), generator=g, device=timing.DEVICE).to(dtype)
    a = torch.sparse_csr_tensor(crow, col, values, (crow.numel() - 1, n))
    result = gpuprim.spmm(crow, col, values, x)
    # fp32 integers: exact sums in any order, rounded once to the dtype as gpuprim's fp32 accumulator is.
    a32 = torch.sparse_csr_tensor(crow, col, values.float(), (crow.numel() - 1, n))
    reference = a32 @ x.float()
    del a32
    timing.assert_equal(result, reference.to(result.dtype), f"gpuprim.spmm {case}")
    del reference
    bytes_moved = (nnz * (values.element_size() + col.element_size()) + crow.numel() * crow.element_size()
                   + x.numel() * x.element_size() + result.numel() * result.element_size())
    del result
    common = dict(bytes_moved=bytes_moved, shape=[crow.numel() - 1, n, features], dtype=dtype, nnz=nnz)
    rows = [timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.spmm(crow, col, values, x)), **common)]
    rows.append(timing.record(OP, case, "gpuprim_unweighted", timing.bench(lambda: gpuprim.spmm(crow, col, None, x)),
                              **common))
    try:
        rows.append(timing.record(OP, case, "torch_sparse_csr", timing.bench(lambda: a @ x), **common))
    except Exception as error:  # noqa: BLE001 - an anchor that cannot run this case must not hide gpuprim's row
        rows.append(timing.error_record(OP, case, "torch_sparse_csr", error))
    source = torch.empty(bytes_moved // 2, dtype=torch.uint8, device=timing.DEVICE)
    destination = torch.empty_like(source)
    rows.append(timing.record(OP, case, "copy", timing.bench(lambda: destination.copy_(source)), **common))
    return rows


def cases(quick: bool) -> List[dict]:
    specs = []
    for graph, widths in (("poisson27", (1, 32)), ("rmat", (1, 32, 128)), ("power_law", (1, 32, 128))):
        for f in widths:
            specs.append(dict(case=f"{graph}_f{f}_f32", graph=graph, features=f, dtype=torch.float32, quick=quick))
    specs.append(dict(case="rmat_f128_bf16", graph="rmat", features=128, dtype=torch.bfloat16, quick=quick))
    return specs


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
