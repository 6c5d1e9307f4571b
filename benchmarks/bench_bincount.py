"""gpuprim.bincount vs torch.bincount vs CUB DeviceHistogram::HistogramEven.

python3 benchmarks/bench_bincount.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = values read (+ weights read); the num_bins counts written are negligible.
torch.bincount reads the input twice (max, then count) and syncs the host for the output size;
that is its real cost, so it is timed as users call it: torch.bincount(x, minlength=num_bins).
Weights are multiples of 1/4 with small per-bin sums, so float sums are exact in any order and
gpuprim must match torch bit for bit with atomics too.
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "bincount"
N = 1 << 28  # 256M int32 values: 1 GiB, 17x the H200's L2


def _values(n: int, num_bins: int, all_same: bool) -> torch.Tensor:
    if all_same:  # every value hits one bin: the worst case for atomics
        return torch.full((n,), num_bins // 2, dtype=torch.int32, device=timing.DEVICE)
    return torch.randint(0, num_bins, (n,), dtype=torch.int32, device=timing.DEVICE)


def _measure_counts(case: str, n: int, num_bins: int, all_same: bool, cub_bin: Optional[str]) -> List[timing.Row]:
    x = _values(n, num_bins, all_same)
    timing.assert_equal(gpuprim.bincount(x, num_bins), torch.bincount(x, minlength=num_bins),
                        f"gpuprim.bincount {case}")
    common = dict(bytes_moved=x.numel() * x.element_size(), shape=(n,), dtype=x.dtype, numel=n, num_bins=num_bins)
    rows = [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.bincount(x, num_bins)), **common),
        timing.record(OP, case, "torch", timing.bench(lambda: torch.bincount(x, minlength=num_bins)), **common),
    ]
    del x
    cub_case = f"histogram_even_u32_{num_bins}" + ("_allsame" if all_same else "")
    return rows + timing.cub_anchor(cub_bin, cub_case, n, op=OP, case=case, shape=(n,), dtype=torch.int32,
                                    numel=n, num_bins=num_bins)


def _measure_weighted(case: str, n: int, num_bins: int, deterministic: bool) -> List[timing.Row]:
    x = _values(n, num_bins, all_same=False)
    # Multiples of 1/4 in [-2, 2]: any partial sum of a bin stays far below 2^24 quarters, so exact.
    weights = torch.randint(-8, 9, (n,), dtype=torch.int8, device=timing.DEVICE).float() / 4
    with gpuprim.deterministic(deterministic):  # the wrapper reads the flag at call time
        timing.assert_equal(gpuprim.bincount(x, num_bins, weights), torch.bincount(x, weights, minlength=num_bins),
                            f"gpuprim.bincount {case}")
        gpuprim_timing = timing.bench(lambda: gpuprim.bincount(x, num_bins, weights))
    torch_timing = timing.bench(lambda: torch.bincount(x, weights, minlength=num_bins))
    common = dict(bytes_moved=x.numel() * (x.element_size() + weights.element_size()), shape=(n,),
                  dtype="int32+float32", numel=n, num_bins=num_bins, deterministic=deterministic)
    return [timing.record(OP, case, "gpuprim", gpuprim_timing, **common),
            timing.record(OP, case, "torch", torch_timing, **common)]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    n = N // timing.size_divisor(quick)
    size = timing.human_count(n)
    specs = [
        dict(case=f"uniform_256bins_{size}", measure=lambda case: _measure_counts(case, n, 256, False, cub_bin)),
        dict(case=f"allsame_256bins_{size}", measure=lambda case: _measure_counts(case, n, 256, True, cub_bin)),
        dict(case=f"uniform_8bins_{size}", measure=lambda case: _measure_counts(case, n, 8, False, cub_bin)),
        dict(case=f"uniform_4096bins_{size}", measure=lambda case: _measure_counts(case, n, 4096, False, cub_bin)),
        dict(case=f"weighted_f32_256bins_{size}",
             measure=lambda case: _measure_weighted(case, n, 256, deterministic=False)),
        dict(case=f"weighted_f32_256bins_{size}_deterministic",
             measure=lambda case: _measure_weighted(case, n, 256, deterministic=True)),
    ]
    return timing.run_cases(OP, specs, lambda case, measure: measure(case), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
