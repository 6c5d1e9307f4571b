"""gpuprim.sort_pairs vs torch (sort + gather) vs CUB DeviceRadixSort::SortPairs.

python3 benchmarks/bench_sort_pairs.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = keys and values read once and written once (the minimum of an out-of-place
sort). A radix sort makes one pass per 8 key bits, so % of copy bandwidth is far below 100 for
every implementation; the ratios are what matter. The CUB anchor sorts u32 keys with u32 values;
gpuprim sorts int32 keys (CUB orders them as signed for us) with int32 values, so equal speed is
the target. torch has no key-value sort: its anchor is torch.sort(stable=True) + index_select.
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "sort_pairs"
N = 1 << 28  # 256M pairs of int32: 2 GiB in, 2 GiB out


def _torch_sort_pairs(keys: torch.Tensor, values: torch.Tensor):
    sorted_keys, order = torch.sort(keys, stable=True)
    return sorted_keys, values.index_select(0, order)


def _measure(case: str, n: int, key_dtype: torch.dtype, end_bit: Optional[int], cub_bin: Optional[str],
             cub_case: Optional[str]) -> List[timing.Row]:
    high = (1 << end_bit) if end_bit else 2**31 - 1
    low = 0 if end_bit else -(2**31)
    keys = torch.randint(low, high, (n,), device=timing.DEVICE, dtype=torch.int64).to(key_dtype)
    values = torch.randint(-(2**31), 2**31 - 1, (n,), device=timing.DEVICE, dtype=torch.int32)
    got = gpuprim.sort_pairs(keys, values, end_bit=end_bit)
    want = _torch_sort_pairs(keys, values)
    timing.assert_equal(got[0], want[0], f"gpuprim.sort_pairs {case} keys")
    timing.assert_equal(got[1], want[1], f"gpuprim.sort_pairs {case} values")
    del got, want
    common = dict(bytes_moved=2 * n * (keys.element_size() + 4), shape=(n,), dtype=key_dtype, numel=n)
    rows = [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.sort_pairs(keys, values, end_bit=end_bit)),
                      **common),
        timing.record(OP, case, "torch", timing.bench(lambda: _torch_sort_pairs(keys, values)), **common),
    ]
    del keys, values
    if cub_case:
        rows += timing.cub_anchor(cub_bin, cub_case, n, op=OP, case=case, shape=(n,), dtype=torch.int32)
    return rows


def cases(quick: bool) -> List[dict]:
    n = N // timing.size_divisor(quick)
    return [
        dict(case=f"int32_{timing.human_count(n)}", n=n, key_dtype=torch.int32, end_bit=None,
             cub_case="radix_sort_pairs_u32"),
        dict(case=f"int32_{timing.human_count(n // 16)}", n=n // 16, key_dtype=torch.int32, end_bit=None,
             cub_case="radix_sort_pairs_u32"),
        # Row ids below 2^20 (e.g. embedding rows): end_bit skips 12 of 32 key bits.
        dict(case=f"int32_{timing.human_count(n)}_end_bit20", n=n, key_dtype=torch.int32, end_bit=20, cub_case=None),
        dict(case=f"int64_{timing.human_count(n // 4)}", n=n // 4, key_dtype=torch.int64, end_bit=None, cub_case=None),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
