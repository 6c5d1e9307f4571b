"""gpuprim.sort vs torch.sort vs CUB DeviceRadixSort::SortPairs.

python3 benchmarks/bench_sort.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = the minimum an out-of-place sort must move: input read + values written +
int64 indices written (2 * element size + 8 per element). A radix sort makes several passes,
so % of copy bandwidth is far below 100 for every implementation; the ratios are what matter.
torch.sort is timed as users call it (stable=True: gpuprim is always stable; torch's CUDA sort
is a stable radix sort either way). The CUB anchor sorts u32 keys with u32 values (no key
transform, no int64 indices): a lower bound on the time of any radix sort with an index payload.
Every case first checks that gpuprim's values and indices equal torch's (a stable sort has one answer).
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import torch

import gpuprim
import timing

OP = "sort"
N = 1 << 28  # 256M int32 keys: 1 GiB, 17x the H200's L2


def sort_input(shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """Uniform over the full range (integers) or standard normal (floats): every radix digit busy."""
    if dtype.is_floating_point:
        return torch.randn(tuple(shape), device=timing.DEVICE, dtype=torch.float32).to(dtype)
    return torch.randint(-(2**31), 2**31 - 1, tuple(shape), device=timing.DEVICE, dtype=torch.int64).to(dtype)


def _measure(case: str, shape: Sequence[int], dtype: torch.dtype, descending: bool, cub_bin: Optional[str],
             cub_case: Optional[str], series: Optional[str]) -> List[timing.Row]:
    x = sort_input(shape, dtype)
    values, indices = gpuprim.sort(x, -1, descending=descending)
    expected = torch.sort(x, stable=True, dim=-1, descending=descending)
    timing.assert_equal(values, expected.values, f"gpuprim.sort {case} values")
    timing.assert_equal(indices, expected.indices, f"gpuprim.sort {case} indices")
    del values, indices, expected
    numel = x.numel()
    common = dict(bytes_moved=numel * (2 * x.element_size() + 8), shape=shape, dtype=dtype, numel=numel,
                  descending=descending)
    if series:
        common["series"] = series
    rows = [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.sort(x, -1, descending=descending)),
                      **common),
        timing.record(OP, case, "torch",
                      timing.bench(lambda: torch.sort(x, stable=True, dim=-1, descending=descending)), **common),
    ]
    del x
    if cub_case:
        rows += timing.cub_anchor(cub_bin, cub_case, int(torch.Size(shape).numel()), op=OP, case=case,
                                  shape=shape, dtype=torch.int32)
    return rows


def cases(quick: bool) -> List[dict]:
    divisor = timing.size_divisor(quick)
    n = N // divisor
    int32_sweep = [
        dict(case=f"int32_{timing.human_count(size)}", shape=(size,), dtype=torch.int32, descending=False,
             cub_case="radix_sort_pairs_u32", series="int32 1-D")
        for size in (max(2, (1 << 20) // divisor), max(2, (1 << 24) // divisor), n)
    ]
    rows = max(1, 4096 // divisor)
    return int32_sweep + [
        dict(case=f"fp32_{timing.human_count(n // 4)}", shape=(n // 4,), dtype=torch.float32, descending=False,
             cub_case=None, series=None),
        # Rows of <= 2048: one thread block sorts each row; longer rows: the row packed into the key.
        dict(case=f"fp32_rows_{rows * 8}x1024", shape=(rows * 8, 1024), dtype=torch.float32, descending=False,
             cub_case=None, series=None),
        dict(case=f"fp32_rows_{rows}x8192", shape=(rows, 8192), dtype=torch.float32, descending=False,
             cub_case=None, series=None),
        # Nucleus (top-p) sampling sorts each row of logits, largest first.
        dict(case="fp32_rows_64x128256_descending", shape=(64, 128256 // divisor), dtype=torch.float32,
             descending=True, cub_case=None, series=None),
        dict(case=f"bf16_rows_{max(1, 1024 // divisor)}x32000_descending", shape=(max(1, 1024 // divisor), 32000),
             dtype=torch.bfloat16, descending=True, cub_case=None, series=None),
        dict(case=f"int64_{timing.human_count(n // 4)}", shape=(n // 4,), dtype=torch.int64, descending=False,
             cub_case=None, series=None),
        # 64-bit keys leave no room for the row in the key: the two-pass path (by key, then by row).
        dict(case=f"fp64_rows_{max(1, 1024 // divisor)}x16384", shape=(max(1, 1024 // divisor), 16384),
             dtype=torch.float64, descending=False, cub_case=None, series=None),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
