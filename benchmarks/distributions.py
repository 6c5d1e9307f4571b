"""The ids and bag layouts the benchmarks draw, shaped like real inputs (fixed seeds, on timing.DEVICE).

ids(kind, rows, n): n ids in [0, rows)
  uniform
  zipf<s>_scattered   rank k drawn with probability ~ k^-s, ranks at random ids ("zipf" = zipf1.0_scattered)
  zipf<s>_adjacent    the same ranks at ids k - 1: the hot rows lowest and adjacent, as in a vocabulary numbered
                      by descending frequency ("zipf<s>_low" is the same)
  all_equal           every id rows // 2
bag_offsets(n, bag, giant=0): starts of bags of `bag` ids covering n ids, with one bag of `giant` ids in the middle.
"""
from __future__ import annotations

import torch

import timing


def ids(kind: str, rows: int, n: int) -> torch.Tensor:
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    if kind == "uniform":
        return torch.randint(0, rows, (n,), device=timing.DEVICE, generator=g)
    if kind == "all_equal":
        return torch.full((n,), rows // 2, device=timing.DEVICE, dtype=torch.int64)
    if kind == "zipf":
        kind = "zipf1.0_scattered"
    exponent, _, placement = kind[len("zipf"):].partition("_")
    if not kind.startswith("zipf") or placement not in ("scattered", "adjacent", "low"):
        raise ValueError(f"unknown id distribution {kind!r}")
    cdf = torch.arange(1, rows + 1, device=timing.DEVICE, dtype=torch.float64).pow(-float(exponent)).cumsum(0)
    u = torch.rand(n, device=timing.DEVICE, dtype=torch.float64, generator=g) * cdf[-1]
    drawn = torch.searchsorted(cdf, u).clamp_max(rows - 1)  # rank - 1: rank 1 is the hottest
    if placement != "scattered":
        return drawn
    return torch.randperm(rows, device=timing.DEVICE, generator=g)[drawn]


def bag_offsets(n: int, bag: int, giant: int = 0) -> torch.Tensor:
    if giant <= 0:
        return torch.arange(0, n, bag, device=timing.DEVICE, dtype=torch.int64)
    before = (n - giant) // bag // 2
    starts = list(range(0, before * bag, bag)) + [before * bag] + list(range(before * bag + giant, n, bag))
    return torch.tensor(starts, device=timing.DEVICE, dtype=torch.int64)
