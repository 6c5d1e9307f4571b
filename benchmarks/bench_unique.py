"""gpuprim.unique (+inverse, +counts) vs torch.unique(sorted=True, return_inverse=True, return_counts=True).

python3 benchmarks/bench_unique.py --out DIR [--quick]

Inputs: n int32 values uniform over `distinct` values (2^10, 2^16, 2^20), n = 256M, 64M and 1M; and 256M uint8
values (a mask's 2 values, all 256, and all equal: the 1-byte path counts keys instead of sorting). Rows:
gpuprim (the exact form: ONE host sync reads the count, like torch.unique's), gpuprim_sized (size = the
distinct count: no sync) and torch (its whole call, host sync included). Bytes per call = x read + inverse
written (int64) + values and counts of the distinct values. Every case first checks gpuprim against torch
exactly.

Slices (dim=0): [rows, width] int64 with each column uniform over `distinct` values, gpuprim.unique(dim=0)
(exact and sized) vs torch.unique(dim=0). Bytes = x read + inverse written + distinct rows and counts written.
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "unique"
N = 1 << 28  # 256M int32: 1 GiB


def _measure(case: str, n: int, distinct: int, dtype: torch.dtype = torch.int32) -> List[timing.Row]:
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    x = torch.randint(0, distinct, (n,), device=timing.DEVICE, generator=g, dtype=dtype)
    values, inverse, counts = gpuprim.unique(x, return_inverse=True, return_counts=True)
    ref_values, ref_inverse, ref_counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
    timing.assert_equal(values, ref_values, f"gpuprim.unique {case} values")
    timing.assert_equal(inverse, ref_inverse, f"gpuprim.unique {case} inverse")
    timing.assert_equal(counts, ref_counts, f"gpuprim.unique {case} counts")
    k = ref_values.numel()
    del values, inverse, counts, ref_values, ref_inverse, ref_counts
    size = x.element_size()
    common = dict(bytes_moved=n * (size + 8) + k * (size + 8), shape=(n,), dtype=dtype, numel=n, distinct=distinct)
    return [
        timing.record(OP, case, "gpuprim",
                      timing.bench(lambda: gpuprim.unique(x, return_inverse=True, return_counts=True)), **common),
        timing.record(OP, case, "gpuprim_sized",
                      timing.bench(lambda: gpuprim.unique(x, return_inverse=True, return_counts=True, size=k)),
                      **common),
        timing.record(OP, case, "torch",
                      timing.bench(lambda: torch.unique(x, sorted=True, return_inverse=True, return_counts=True)),
                      **common),
    ]


def _measure_rows(case: str, rows: int, width: int, distinct: int) -> List[timing.Row]:
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    x = torch.randint(0, distinct, (rows, width), device=timing.DEVICE, generator=g, dtype=torch.int64)
    values, inverse, counts = gpuprim.unique(x, dim=0, return_inverse=True, return_counts=True)
    ref_values, ref_inverse, ref_counts = torch.unique(x, dim=0, return_inverse=True, return_counts=True)
    timing.assert_equal(values, ref_values, f"gpuprim.unique {case} values")
    timing.assert_equal(inverse, ref_inverse, f"gpuprim.unique {case} inverse")
    timing.assert_equal(counts, ref_counts, f"gpuprim.unique {case} counts")
    k = ref_counts.numel()
    del values, inverse, counts, ref_values, ref_inverse, ref_counts
    common = dict(bytes_moved=rows * (8 * width + 8) + k * (8 * width + 8), shape=(rows, width), dtype=torch.int64,
                  numel=rows * width, distinct_per_column=distinct, distinct_rows=k)
    return [
        timing.record(OP, case, "gpuprim",
                      timing.bench(lambda: gpuprim.unique(x, dim=0, return_inverse=True, return_counts=True)),
                      **common),
        timing.record(OP, case, "gpuprim_sized",
                      timing.bench(lambda: gpuprim.unique(x, dim=0, return_inverse=True, return_counts=True, size=k)),
                      **common),
        timing.record(OP, case, "torch",
                      timing.bench(lambda: torch.unique(x, dim=0, return_inverse=True, return_counts=True)),
                      **common),
    ]


def _measure_any(case: str, **spec) -> List[timing.Row]:
    return _measure_rows(case, **spec) if "width" in spec else _measure(case, **spec)


def cases(quick: bool) -> List[dict]:
    out: List[dict] = []
    for n in (N, N // 4, N // 256):
        n //= timing.size_divisor(quick)
        for bits in (10, 16, 20):
            out.append(dict(case=f"int32_{timing.human_count(n)}_distinct2^{bits}", n=n, distinct=1 << bits))
    n = N // timing.size_divisor(quick)
    for distinct in (2, 256, 1):
        out.append(dict(case=f"uint8_{timing.human_count(n)}_distinct{distinct}", n=n, distinct=distinct,
                        dtype=torch.uint8))
    rows = (1 << 22) // timing.size_divisor(quick)  # [4M, 4] int64: 128 MiB
    for distinct in (16, 1 << 20):  # up to 2^16 distinct rows; nearly every row distinct
        out.append(dict(case=f"dim0_int64_{timing.human_count(rows)}x4_column{timing.human_count(distinct)}",
                        rows=rows, width=4, distinct=distinct))
    return out


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    del cub_bin  # CUB has no unique; torch.unique is the anchor
    return timing.run_cases(OP, cases(quick), _measure_any, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
