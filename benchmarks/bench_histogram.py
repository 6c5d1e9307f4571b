"""gpuprim.histogram vs torch.histc vs CUB DeviceHistogram::HistogramEven.

python3 benchmarks/bench_histogram.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = values read (the bins counts written are negligible). torch.histc has the same
equal-width bins but clamps the last edge in (closed [lo, hi]) and returns floats; its counts are
checked equal to gpuprim's on inputs that never touch hi. The CUB anchor bins u32 samples over
[0, bins) (integer level math); gpuprim bins int32 values over [0, bins) with float64 bin math,
and fp32 values the same way.
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "histogram"
N = 1 << 28  # 256M values: 1 GiB of int32 or fp32, 17x the H200's L2


def _values(n: int, bins: int, dtype: torch.dtype, all_same: bool) -> torch.Tensor:
    if all_same:  # every value in one bin: the worst case for atomics
        return torch.full((n,), bins // 2, dtype=dtype, device=timing.DEVICE)
    if dtype.is_floating_point:
        return torch.rand(n, device=timing.DEVICE, dtype=dtype) * bins
    return torch.randint(0, bins, (n,), dtype=dtype, device=timing.DEVICE)


def _measure(case: str, n: int, bins: int, dtype: torch.dtype, all_same: bool,
             cub_bin: Optional[str]) -> List[timing.Row]:
    x = _values(n, bins, dtype, all_same)
    lo, hi = 0.0, float(bins)
    expected = torch.histc(x.float(), bins, lo, hi).long()
    timing.assert_equal(gpuprim.histogram(x, bins, lo, hi), expected, f"gpuprim.histogram {case}")
    common = dict(bytes_moved=x.numel() * x.element_size(), shape=(n,), dtype=dtype, numel=n, num_bins=bins)
    rows = [timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.histogram(x, bins, lo, hi)), **common)]
    if dtype == torch.float32:  # torch.histc has no bf16 kernel
        rows.append(timing.record(OP, case, "torch_histc", timing.bench(lambda: torch.histc(x, bins, lo, hi)),
                                  **common))
    del x
    if dtype == torch.int32:
        cub_case = f"histogram_even_u32_{bins}" + ("_allsame" if all_same else "")
        rows += timing.cub_anchor(cub_bin, cub_case, n, op=OP, case=case, shape=(n,), dtype=dtype)
    return rows


def cases(quick: bool) -> List[dict]:
    n = N // timing.size_divisor(quick)
    return [
        dict(case="int32_256bins", n=n, bins=256, dtype=torch.int32, all_same=False),
        dict(case="int32_256bins_all_equal", n=n, bins=256, dtype=torch.int32, all_same=True),
        dict(case="fp32_256bins", n=n, bins=256, dtype=torch.float32, all_same=False),
        dict(case="fp32_256bins_all_equal", n=n, bins=256, dtype=torch.float32, all_same=True),
        dict(case="bf16_100bins", n=n, bins=100, dtype=torch.bfloat16, all_same=False),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
