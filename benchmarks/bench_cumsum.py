"""gpuprim.cumsum vs torch.cumsum vs CUB DeviceScan::ExclusiveSum.

python3 benchmarks/bench_cumsum.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = input read + output written (int32 input gives int64 output, as torch.cumsum;
the CUB int32 anchor writes int32, so its row counts its own, smaller, bytes).
Inputs are small integers (in float dtypes too): every partial sum is exact in any summation
order, so gpuprim must match torch bit for bit, whatever its blocking.
"""
from __future__ import annotations

import os
from typing import List, Optional, Sequence

import torch

import gpuprim
import timing

OP = "cumsum"
N = 1 << 28  # 256M elements: 1 GiB of fp32, 17x the H200's L2


def _small_integer_input(shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    # Values in {-1, 0, 1}: prefix sums are a random walk, |sum| << 2^24, so fp32 partials are exact.
    values = torch.randint(-1, 2, tuple(shape), dtype=torch.int8, device=timing.DEVICE)
    return values.to(dtype)


def _measure(case: str, shape: Sequence[int], dtype: torch.dtype, cub_bin: Optional[str],
             cub_case: Optional[str], series: Optional[str]) -> List[timing.Row]:
    x = _small_integer_input(shape, dtype)
    result = gpuprim_cumsum(x)
    if dtype in (torch.float16, torch.bfloat16):
        # gpuprim accumulates fp16/bf16 in fp32 and rounds once; the exact fp32 scan rounded is the answer.
        expected = torch.cumsum(x.float(), dim=-1).to(dtype)
    else:
        expected = torch.cumsum(x, dim=-1)
    timing.assert_equal(result, expected, f"gpuprim.cumsum {case}")
    expected_dtype, expected_once = expected.dtype, expected
    bytes_moved = x.numel() * x.element_size() + result.numel() * result.element_size()
    numel = x.numel()
    del result
    labels = dict(numel=numel, series=series) if series else dict(numel=numel)  # series: a line in the plot
    common = dict(shape=shape, dtype=dtype, **labels)
    rows = [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim_cumsum(x)), bytes_moved=bytes_moved, **common),
        timing.record(OP, case, "torch", timing.bench(lambda: torch.cumsum(x, dim=-1)), bytes_moved=bytes_moved,
                      **common),
    ]
    if dtype in (torch.float32, torch.float16, torch.bfloat16):
        # Long rows of these types take the single pass by default; reduce-then-scan timed for comparison.
        previous = os.environ.get("GPUPRIM_SCAN_ALGO")
        os.environ["GPUPRIM_SCAN_ALGO"] = "three_pass"
        try:
            timing.assert_equal(gpuprim_cumsum(x).to(expected_dtype), expected_once,
                                f"gpuprim.cumsum three_pass {case}")
            rows.append(timing.record(OP, case, "gpuprim_three_pass", timing.bench(lambda: gpuprim_cumsum(x)),
                                      bytes_moved=bytes_moved, **common))
        finally:
            if previous is None:
                os.environ.pop("GPUPRIM_SCAN_ALGO")
            else:
                os.environ["GPUPRIM_SCAN_ALGO"] = previous
    del x, expected_once
    if cub_case:  # CUB times an exclusive scan; inclusive and exclusive move the same bytes
        rows += timing.cub_anchor(cub_bin, cub_case, numel, op=OP, case=case, **common)
    return rows


def gpuprim_cumsum(x: torch.Tensor) -> torch.Tensor:
    return gpuprim.cumsum(x, dim=-1)


def cases(quick: bool) -> List[dict]:
    divisor = timing.size_divisor(quick)
    n = N // divisor
    fp32_sweep = [
        dict(case=f"fp32_{timing.human_count(size)}", shape=(size,), dtype=torch.float32,
             cub_case="scan_exclusive_sum_f32", series="fp32 1-D")
        for size in (max(1, (1 << 20) // divisor), (1 << 24) // divisor, n)
    ]
    rows_shape = (max(1, 4096 // divisor), 32768)
    return fp32_sweep + [
        dict(case=f"fp32_rows_{rows_shape[0]}x{rows_shape[1]}", shape=rows_shape, dtype=torch.float32,
             cub_case=None, series=None),  # CUB has no batched scan
        dict(case=f"bf16_{timing.human_count(n)}", shape=(n,), dtype=torch.bfloat16, cub_case=None, series=None),
        dict(case=f"int32_{timing.human_count(n)}", shape=(n,), dtype=torch.int32,
             cub_case="scan_exclusive_sum_i32", series=None),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
