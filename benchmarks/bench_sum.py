"""gpuprim.sum / gpuprim.mean vs torch.sum / torch.mean vs CUB DeviceReduce::Sum.

python3 benchmarks/bench_sum.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = input read (the outputs are negligible, except for the many-row cases where
they are counted). gpuprim is bitwise reproducible (exact binned accumulation); torch.sum and CUB
are not order-independent, so results are only checked for closeness before timing, plus a
run-to-run bitwise check of gpuprim. Goals (issue 7): fp32 256M >= 0.9x CUB and >= 0.9x torch.sum;
rows [65536, 4096] >= 0.9x torch.sum(dim=1); <= 1M elements within 1.5x torch.sum's latency.
Integer sums (exact int64, CUB DeviceReduce / DeviceSegmentedReduce) are checked equal to torch.sum;
goal: int32 256M >= 0.9x torch.sum and >= 90% of copy bandwidth.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import torch

import gpuprim
import timing

OP = "sum"
N = 1 << 28  # 256M elements: 1 GiB of fp32, 17x the H200's L2


def _check(ours: torch.Tensor, theirs: torch.Tensor, x: torch.Tensor, dim, what: str) -> None:
    """Close to a float64 reference (the bound of exact_sum.h plus one rounding), and reproducible."""
    ref = x.double().sum() if dim is None else x.double().sum(dim)
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        raise AssertionError(f"{what}: {ours.dtype}{list(ours.shape)} vs torch {theirs.dtype}{list(theirs.shape)}")
    n = x.numel() if dim is None else x.shape[dim]
    amax = x.abs().max().double()
    bound = n * 2.0 ** -32 * amax + torch.finfo(ours.dtype).eps * ref.abs() + 1e-30
    err = (ours.double() - ref).abs()
    if not bool((err <= bound).all()):
        raise AssertionError(f"{what}: error {float(err.max())} above bound")
    timing.assert_equal(gpuprim_sum(x, dim), ours, f"{what} (run-to-run bits)")


def gpuprim_sum(x: torch.Tensor, dim) -> torch.Tensor:
    return gpuprim.sum(x) if dim is None else gpuprim.sum(x, dim)


def torch_sum(x: torch.Tensor, dim) -> torch.Tensor:
    return torch.sum(x) if dim is None else torch.sum(x, dim)


def _measure(case: str, shape: Sequence[int], dtype: torch.dtype, dim, cub_bin: Optional[str],
             cub_case: Optional[str], series: Optional[str]) -> List[timing.Row]:
    if dtype.is_floating_point:
        x = torch.randn(tuple(shape), device=timing.DEVICE, dtype=dtype)
        ours = gpuprim_sum(x, dim)
        _check(ours, torch_sum(x, dim), x, dim, f"gpuprim.sum {case}")
    else:  # integer sums are exact: equal to torch's
        x = torch.randint(-1000, 1000, tuple(shape), device=timing.DEVICE).to(dtype)
        ours = gpuprim_sum(x, dim)
        timing.assert_equal(ours, torch_sum(x, dim), f"gpuprim.sum {case}")
    bytes_moved = x.numel() * x.element_size() + ours.numel() * ours.element_size()
    del ours
    common = dict(bytes_moved=bytes_moved, shape=shape, dtype=dtype, numel=x.numel())
    if series:
        common["series"] = series
    rows = [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim_sum(x, dim)), **common),
        timing.record(OP, case, "torch", timing.bench(lambda: torch_sum(x, dim)), **common),
    ]
    if dim is None and dtype.is_floating_point:
        rows.append(timing.record(OP, case, "gpuprim_mean", timing.bench(lambda: gpuprim.mean(x)), **common))
    del x
    if cub_case:
        rows += timing.cub_anchor(cub_bin, cub_case, int(torch.Size(shape).numel()), op=OP, case=case,
                                  shape=shape, dtype=dtype)
    return rows


def cases(quick: bool) -> List[dict]:
    divisor = timing.size_divisor(quick)
    n = N // divisor
    sweep = [
        dict(case=f"fp32_{timing.human_count(size)}", shape=(size,), dtype=torch.float32, dim=None,
             cub_case="reduce_sum_f32", series="fp32 1-D")
        for size in sorted({max(1, 1000 // divisor), max(1, (1 << 16) // divisor), max(1, (1 << 20) // divisor),
                            (1 << 24) // divisor, n})
    ]
    rows_shape = (max(1, 65536 // divisor), 4096)
    return sweep + [
        dict(case=f"fp32_rows_{rows_shape[0]}x{rows_shape[1]}", shape=rows_shape, dtype=torch.float32, dim=1,
             cub_case=None, series=None),  # torch.sum(dim=1) is the anchor
        dict(case=f"fp32_cols_{rows_shape[1]}x{rows_shape[0]}", shape=(rows_shape[1], rows_shape[0]),
             dtype=torch.float32, dim=0, cub_case=None, series=None),  # non-last dim: [outer, n, inner] kernel
        dict(case=f"bf16_{timing.human_count(n)}", shape=(n,), dtype=torch.bfloat16, dim=None, cub_case=None,
             series=None),
        dict(case=f"fp64_{timing.human_count(n // 2)}", shape=(n // 2,), dtype=torch.float64, dim=None,
             cub_case=None, series=None),
        dict(case=f"int32_{timing.human_count(n)}", shape=(n,), dtype=torch.int32, dim=None, cub_case=None,
             series=None),
        dict(case=f"bool_{timing.human_count(n)}", shape=(n,), dtype=torch.bool, dim=None, cub_case=None,
             series=None),
        dict(case=f"int32_rows_{rows_shape[0]}x{rows_shape[1]}", shape=rows_shape, dtype=torch.int32, dim=1,
             cub_case=None, series=None),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
