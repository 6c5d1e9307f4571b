"""gpuprim.masked_select vs torch.masked_select (both exact-size, both sync to size the output).

python3 benchmarks/bench_masked_select.py --out DIR [--quick]

Bytes per call = x read + mask read + kept elements written (the minimum). gpuprim runs compact's one-pass
kernel without a fill into a scratch buffer, syncs on its count and copies the kept prefix out (2 * 4 B per
kept fp32 element more than the minimum); torch.masked_select also syncs to size its output. Every case first
checks the result against torch.masked_select.
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "masked_select"
N = 1 << 28  # 256M fp32: 1 GiB, 17x the H200's L2


def _measure(case: str, n: int, dtype: torch.dtype, keep: float) -> List[timing.Row]:
    x = torch.randn(n, device=timing.DEVICE, dtype=torch.float32).to(dtype)
    mask = torch.rand(n, device=timing.DEVICE) < keep
    expected = torch.masked_select(x, mask)
    timing.assert_equal(gpuprim.masked_select(x, mask), expected, f"gpuprim.masked_select {case}")
    common = dict(bytes_moved=n * (x.element_size() + 1) + expected.numel() * x.element_size(), shape=(n,),
                  dtype=dtype, numel=n, keep=keep)
    del expected
    return [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.masked_select(x, mask)), **common),
        timing.record(OP, case, "torch", timing.bench(lambda: torch.masked_select(x, mask)), **common),
    ]


def cases(quick: bool) -> List[dict]:
    n = N // timing.size_divisor(quick)
    return [
        dict(case=f"fp32_{timing.human_count(n)}_keep50", n=n, dtype=torch.float32, keep=0.5),
        dict(case=f"fp32_{timing.human_count(n)}_keep5", n=n, dtype=torch.float32, keep=0.05),
        dict(case=f"bf16_{timing.human_count(n)}_keep50", n=n, dtype=torch.bfloat16, keep=0.5),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
