"""gpuprim.index_add (deterministic and atomic) vs torch index_add_ (default and deterministic algorithms).

python3 benchmarks/bench_index_add.py --out DIR [--quick]

The issue's case: source [1.3M, 128] fp32 added into [1M, 128] along dim 0 with uniform, Zipf-like and
all-equal indices. Targets: gpuprim deterministic <= 2x torch's default (atomic) index_add_, and >= 15x faster
than torch's index_add_ under torch.use_deterministic_algorithms(True) (the flag is restored after).
Bytes per call = input read + output written + source read + index read. Values are small integers (in fp32),
so every sum is exact in any order and gpuprim must equal torch bit for bit before it is timed.
CUB has no primitive for this (sort + segmented reduce by key of rows), so no CUB anchor.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import torch

import gpuprim  # noqa: F401  (loads the library: torch.ops.gpuprim.index_add)
import timing

OP = "index_add"
ROWS = 1_000_000
ITEMS = 1_300_000
WIDTH = 128


def _index(pattern: str, items: int, rows: int) -> torch.Tensor:
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    if pattern == "uniform":
        return torch.randint(0, rows, (items,), device=timing.DEVICE, generator=g)
    if pattern == "zipf":  # P(k) ~ k^-1.5-ish: a few very hot rows, a long tail
        u = torch.rand(items, device=timing.DEVICE, generator=g).clamp_min(1e-12)
        return (u.pow(-1.0 / 0.5) - 1).long().clamp_max(rows - 1)
    return torch.full((items,), rows // 2, device=timing.DEVICE, dtype=torch.long)


def _torch_deterministic(fn: Callable[[], object]) -> Callable[[], object]:
    def call():
        previous = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            return fn()
        finally:
            torch.use_deterministic_algorithms(previous)
    return call


def _measure(case: str, rows: int, items: int, width: int, pattern: str, dtype: torch.dtype) -> List[timing.Row]:
    input = torch.randint(-2, 3, (rows, width), device=timing.DEVICE).to(dtype)
    source = torch.randint(-2, 3, (items, width), device=timing.DEVICE).to(dtype)
    index = _index(pattern, items, rows)
    out = torch.empty_like(input)
    expected = input.clone().index_add_(0, index, source)
    impls: Dict[str, Callable] = {
        "gpuprim_deterministic": lambda: torch.ops.gpuprim.index_add.default(input, 0, index, source,
                                                                             deterministic=True),
        "gpuprim_atomic": lambda: torch.ops.gpuprim.index_add.default(input, 0, index, source, deterministic=False),
    }
    for name, fn in impls.items():
        timing.assert_equal(fn(), expected, f"{name} {case}")
    anchors: Dict[str, Callable] = {
        "torch_index_add_": lambda: out.copy_(input).index_add_(0, index, source),
        "torch_index_add_deterministic": _torch_deterministic(lambda: out.copy_(input).index_add_(0, index, source)),
    }
    timing.assert_equal(anchors["torch_index_add_deterministic"](), expected, f"torch deterministic {case}")
    del expected
    bytes_moved = 2 * input.numel() * input.element_size() + source.numel() * source.element_size() + \
        index.numel() * index.element_size()
    common = dict(bytes_moved=bytes_moved, shape=(items, width), dtype=dtype, numel=source.numel(), rows=rows,
                  pattern=pattern)
    result = [timing.record(OP, case, name, timing.bench(fn), **common) for name, fn in impls.items()]
    for name, fn in anchors.items():
        reps = dict(warmup=1, reps=5) if name == "torch_index_add_deterministic" else {}
        try:
            result.append(timing.record(OP, case, name, timing.bench(fn, **reps), **common))
        except Exception as error:  # noqa: BLE001 - an anchor that cannot run must not hide gpuprim's rows
            result.append(timing.error_record(OP, case, name, error))
    return result


def cases(quick: bool) -> List[dict]:
    div = timing.size_divisor(quick)
    rows, items = ROWS // div, ITEMS // div
    return [dict(case=f"{pattern}_1.3Mx128_into_1M_f32", rows=rows, items=items, width=WIDTH, pattern=pattern,
                 dtype=torch.float32) for pattern in ("uniform", "zipf", "all_equal")]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
