"""gpuprim.sort_values vs torch.sort(...).values vs CUB DeviceRadixSort::SortKeys.

python3 benchmarks/bench_sort_values.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = input read + values written (2 * element size per element); a radix sort makes several
passes, so % of copy bandwidth is low for every implementation and the ratios are what matter. torch has no
values-only sort: torch.sort (stable=True) computes the int64 indices too, as users pay for them. The CUB
anchor sorts u32 keys alone (radix_sort_keys_u32), the work of the int32 row. The fp32 case takes gpuprim.sort's
path (floats keep -0.0 / +0.0 and NaN payloads in input order, which needs the positions). Every case first
checks that gpuprim's values equal torch's.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import torch

import gpuprim
import timing
from bench_sort import sort_input

OP = "sort_values"
N = 1 << 28  # 256M int32 keys: 1 GiB, 17x the H200's L2


def _measure(case: str, shape: Sequence[int], dtype: torch.dtype, descending: bool, cub_bin: Optional[str],
             cub_case: Optional[str]) -> List[timing.Row]:
    x = sort_input(shape, dtype)
    expected = torch.sort(x, stable=True, dim=-1, descending=descending).values
    timing.assert_equal(gpuprim.sort_values(x, -1, descending=descending), expected, f"gpuprim.sort_values {case}")
    del expected
    numel = x.numel()
    common = dict(bytes_moved=numel * 2 * x.element_size(), shape=shape, dtype=dtype, numel=numel,
                  descending=descending)
    rows = [
        timing.record(OP, case, "gpuprim",
                      timing.bench(lambda: gpuprim.sort_values(x, -1, descending=descending)), **common),
        timing.record(OP, case, "gpuprim_sort",
                      timing.bench(lambda: gpuprim.sort(x, -1, descending=descending)), **common),
        timing.record(OP, case, "torch",
                      timing.bench(lambda: torch.sort(x, stable=True, dim=-1, descending=descending)), **common),
    ]
    del x
    if cub_case:
        rows += timing.cub_anchor(cub_bin, cub_case, numel, op=OP, case=case, shape=shape, dtype=torch.int32)
    return rows


def cases(quick: bool) -> List[dict]:
    n = N // timing.size_divisor(quick)
    return [
        dict(case=f"int32_{timing.human_count(n)}", shape=(n,), dtype=torch.int32, descending=False,
             cub_case="radix_sort_keys_u32"),
        dict(case=f"int32_{timing.human_count(n)}_descending", shape=(n,), dtype=torch.int32, descending=True,
             cub_case=None),
        dict(case=f"int64_{timing.human_count(n // 4)}", shape=(n // 4,), dtype=torch.int64, descending=False,
             cub_case=None),
        dict(case=f"fp32_{timing.human_count(n // 4)}", shape=(n // 4,), dtype=torch.float32, descending=False,
             cub_case=None),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
