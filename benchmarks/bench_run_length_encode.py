"""gpuprim.run_length_encode vs torch.unique_consecutive(return_counts=True).

python3 benchmarks/bench_run_length_encode.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = x read + (unique + int64 count) written per run. gpuprim's fixed-capacity outputs
are also zero-filled past num_runs (not counted), and it never syncs; torch.unique_consecutive
syncs to size its outputs. No CUB anchor case exists yet (a DeviceRunLengthEncode::Encode case
would be the natural one). Every case first checks gpuprim against torch exactly.

Slices (dim=0): [rows, 4] int32 in runs of equal rows vs torch.unique_consecutive(dim=0, return_counts=True).
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "run_length_encode"
N = 1 << 28  # 256M int32: 1 GiB


def _check_runs(case: str, x: torch.Tensor, dim: dict) -> int:
    """gpuprim's runs against torch.unique_consecutive's, bit for bit; returns the number of runs."""
    unique, counts, num_runs = gpuprim.run_length_encode(x, **dim)
    ref_unique, ref_counts = torch.unique_consecutive(x, return_counts=True, **dim)
    r = ref_counts.numel()
    if int(num_runs) != r:
        raise AssertionError(f"gpuprim.run_length_encode {case}: num_runs {int(num_runs)} != {r}")
    timing.assert_equal(unique[:r], ref_unique, f"gpuprim.run_length_encode {case} unique")
    timing.assert_equal(counts[:r], ref_counts, f"gpuprim.run_length_encode {case} counts")
    return r


def _measure(case: str, n: int, dtype: torch.dtype, mean_run: int, cub_bin: Optional[str]) -> List[timing.Row]:
    del cub_bin  # no anchor case yet
    # Runs of random lengths in [1, 2 * mean_run) of random values in [0, 4).
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    lengths = torch.randint(1, 2 * mean_run, (n // mean_run + 1,), device=timing.DEVICE, generator=g)
    values = torch.randint(0, 4, lengths.shape, device=timing.DEVICE, generator=g).to(dtype)
    x = torch.repeat_interleave(values, lengths)[:n].contiguous()
    del lengths, values
    r = _check_runs(case, x, {})
    common = dict(bytes_moved=n * x.element_size() + r * (x.element_size() + 8), shape=(n,), dtype=dtype, numel=n,
                  mean_run=mean_run)
    return [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.run_length_encode(x)), **common),
        timing.record(OP, case, "torch",
                      timing.bench(lambda: torch.unique_consecutive(x, return_counts=True)), **common),
    ]


def _measure_rows(case: str, rows: int, width: int, mean_run: int) -> List[timing.Row]:
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    lengths = torch.randint(1, 2 * mean_run, (rows // mean_run + 1,), device=timing.DEVICE, generator=g)
    values = torch.randint(0, 2, (lengths.numel(), width), device=timing.DEVICE, generator=g, dtype=torch.int32)
    x = torch.repeat_interleave(values, lengths, dim=0)[:rows].contiguous()
    del lengths, values
    r = _check_runs(case, x, {"dim": 0})
    common = dict(bytes_moved=x.numel() * 4 + r * (4 * width + 8), shape=(rows, width), dtype=torch.int32,
                  numel=x.numel(), mean_run=mean_run)
    return [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.run_length_encode(x, dim=0)), **common),
        timing.record(OP, case, "torch",
                      timing.bench(lambda: torch.unique_consecutive(x, return_counts=True, dim=0)), **common),
    ]


def _measure_any(case: str, cub_bin: Optional[str], **spec) -> List[timing.Row]:
    return _measure_rows(case, **spec) if "width" in spec else _measure(case, cub_bin=cub_bin, **spec)


def cases(quick: bool) -> List[dict]:
    n = N // timing.size_divisor(quick)
    rows = (1 << 24) // timing.size_divisor(quick)
    return [
        dict(case=f"int32_{timing.human_count(n)}_run8", n=n, dtype=torch.int32, mean_run=8),
        dict(case=f"fp32_{timing.human_count(n)}_run2", n=n, dtype=torch.float32, mean_run=2),
        dict(case=f"dim0_int32_{timing.human_count(rows)}x4_run8", rows=rows, width=4, mean_run=8),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure_any(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
