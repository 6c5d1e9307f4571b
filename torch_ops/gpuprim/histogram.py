"""gpuprim.histogram: equal-width bins over [lo, hi), fixed size, no host sync."""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from gpuprim._determinism import is_deterministic
from gpuprim._errors import reports_input_errors


@reports_input_errors
def histogram(
    x: Tensor,
    bins: int,
    lo: float,
    hi: float,
    weights: Optional[Tensor] = None,
    *,
    return_overflow: bool = False,
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """Counts the values of ``x`` (any shape, flattened) in ``bins`` equal-width bins over ``[lo, hi)``.

    Bin ``i`` holds ``lo + i*w <= v < lo + (i+1)*w`` with ``w = (hi - lo) / bins``. Unlike
    :func:`torch.histc`, the last edge is exclusive, and values outside ``[lo, hi)`` (and NaN) are not
    clamped in but dropped and counted in ``overflow``. The output size is fixed by ``bins``: no
    host sync, CUDA-graph capturable, compiles without graph breaks.

    Args:
        x: floating-point or integer tensor.
        bins: number of bins, >= 1.
        lo, hi: finite range, lo < hi.
        weights: optional tensor of x's shape; each value adds its weight instead of 1.
        return_overflow: also return the number of dropped values (1-element int64 tensor).

    Returns:
        ``counts`` of shape ``[bins]`` with bincount's dtypes (int64; float32 for float32 weights,
        else float64), and with ``return_overflow`` the tuple ``(counts, overflow)``.

    Determinism: as :func:`gpuprim.bincount` (integer counts exact; float weights bitwise with the
    determinism flag on). The bin of each value is computed in float64 (subtract lo, multiply by
    bins / (hi - lo), floor, clamp) identically by the CPU and CUDA kernels, so integer counts are
    equal on both. CUDA: one pass, bincount's privatized counting kernel with the bin math inside.
    """
    counts, overflow = torch.ops.gpuprim.histogram.default(x, bins, lo, hi, weights,
                                                           deterministic=is_deterministic())
    return (counts, overflow) if return_overflow else counts
