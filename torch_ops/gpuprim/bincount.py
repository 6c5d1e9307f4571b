"""gpuprim.bincount: fixed-size histogram of integer values, no host sync."""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from gpuprim._determinism import is_deterministic
from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating


@reports_input_errors
def bincount(
    x: Tensor,
    num_bins: int,
    weights: Optional[Tensor] = None,
    *,
    return_overflow: bool = False,
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """Counts how often each value in ``[0, num_bins)`` occurs in the 1-D integer tensor ``x``.

    Unlike :func:`torch.bincount`, the output size is ``num_bins`` whatever the data, so nothing
    waits for the GPU and the op can be captured in a CUDA graph or compiled without a graph break.
    Values outside ``[0, num_bins)`` are dropped and counted in ``overflow`` (in validate mode,
    see :func:`gpuprim.set_validate`, they raise a ValueError instead, at the cost of a sync).

    Args:
        x: 1-D tensor of uint8/int8/int16/int32/int64 values.
        num_bins: number of bins, >= 1.
        weights: optional 1-D tensor of x's length; each value adds its weight instead of 1.
        return_overflow: also return the number of dropped values (a 1-element int64 tensor).

    Returns:
        ``counts`` of shape ``[num_bins]``: int64 without weights, float32 for float32 weights,
        float64 for other weights (torch.bincount's dtypes). With ``return_overflow``, the
        tuple ``(counts, overflow)``.

    Determinism: integer counts are exact, hence always reproducible. Floating-point weight sums
    on CUDA use atomics unless gpuprim's determinism flag is on (:func:`gpuprim.set_deterministic`,
    default: follow torch.use_deterministic_algorithms); then they are bitwise identical on every
    run and every GPU (a fixed summation order), though not equal to the CPU's sequential sum.
    """
    if is_validating():
        _validate_values(x, num_bins)
    counts, overflow = torch.ops.gpuprim.bincount.default(x, num_bins, weights, deterministic=is_deterministic())
    return (counts, overflow) if return_overflow else counts


def _validate_values(x: Tensor, num_bins: int) -> None:
    if x.numel() == 0 or x.is_floating_point() or x.dim() != 1:
        return  # the op's own checks report shape and dtype errors
    low, high = int(x.min()), int(x.max())
    if low < 0 or high >= num_bins:
        bad = low if low < 0 else high
        raise ValueError(f"gpuprim.bincount: values of x must be in [0, {num_bins}), got {bad}")
