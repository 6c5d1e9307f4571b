"""The shared sample-input matrix every op is tested over (DESIGN.md, "Tests").

Each sample is a (name, tensor) pair built on the requested device from a fixed seed, so a failure
names its sample and reproduces. Sizes are small enough for CPU CI; GPU-only large cases live in
each op's tests, marked `slow`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

import torch

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INT_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
INDEX_DTYPES = (torch.int32, torch.int64)
# Not multiples of a warp, block or tile (tiles are 4096 elements in the CUDA scan).
RAGGED_SIZES = (3, 33, 1000, 4097, 9001)


@dataclass
class Sample:
    name: str
    x: torch.Tensor

    def __repr__(self) -> str:  # shows in pytest ids and failure messages
        return f"{self.name}[{tuple(self.x.shape)},{str(self.x.dtype).replace('torch.', '')}]"


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def value_samples(device: str, dtype: torch.dtype) -> List[Sample]:
    """Values to scan, sum or sort: the shape and value kinds of the shared matrix, one dtype."""
    floating = dtype.is_floating_point
    g = _gen(1234)

    def rand(*shape):
        if floating:
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=g).bool()
        high = 4 if dtype in (torch.uint8, torch.int8) else 1000  # int8 sums stay readable
        return torch.randint(-high if dtype != torch.uint8 else 0, high, shape, generator=g).to(dtype)

    samples = [
        Sample("empty", rand(0)),
        Sample("one", rand(1)),
        Sample("scalar", rand(1).reshape(())),
    ]
    samples += [Sample(f"ragged{n}", rand(n)) for n in RAGGED_SIZES]
    sorted_values = torch.sort(rand(777)).values
    samples += [
        Sample("sorted", sorted_values),
        Sample("reverse_sorted", sorted_values.flip(0)),
        Sample("constant", torch.full((5000,), 3, dtype=dtype)),
        Sample("skewed", torch.where(torch.rand(3000, generator=g) < 0.9, torch.tensor(7, dtype=dtype), rand(3000))),
        Sample("rows", rand(37, 129)),
        Sample("long_rows", rand(3, 10000)),
        Sample("batch3d", rand(4, 50, 6)),
        Sample("noncontiguous", rand(129, 37).t()),
        Sample("strided", rand(4001)[::2]),
    ]
    if floating:
        special = rand(64)
        special[3], special[10], special[11] = float("nan"), float("inf"), float("-inf")
        special[20], special[30] = -0.0, 0.0
        samples.append(Sample("nan_inf_negzero", special))
        samples.append(Sample("all_negzero", torch.full((100,), -0.0, dtype=dtype)))
    return [Sample(s.name, s.x.to(device)) for s in samples]


def index_samples(device: str, dtype: torch.dtype, num_bins: int) -> List[Sample]:
    """Bin indices for histogram-like ops: uniform, skewed, all-equal, and out-of-range values."""
    g = _gen(99)
    low = 0 if dtype == torch.uint8 else -3
    high = min(num_bins + 3, torch.iinfo(dtype).max)

    def randint(lo, hi, n):
        return torch.randint(lo, hi, (n,), generator=g).to(dtype)

    in_range = max(1, min(num_bins, torch.iinfo(dtype).max + 1))
    samples = [
        Sample("empty", randint(0, 1, 0)),
        Sample("one", randint(0, in_range, 1)),
        Sample("uniform", randint(0, in_range, 5003)),
        Sample("all_equal", torch.full((4099,), in_range - 1, dtype=dtype)),
        Sample("skewed", torch.where(torch.rand(3001, generator=g) < 0.95, torch.tensor(0, dtype=dtype),
                                     randint(0, in_range, 3001))),
        Sample("out_of_range", randint(low, high, 2000)),
        Sample("strided", randint(0, in_range, 4001)[::3]),
    ]
    return [Sample(s.name, s.x.to(device)) for s in samples]


def ids(samples: Sequence[Sample]) -> List[str]:
    return [repr(s) for s in samples]
