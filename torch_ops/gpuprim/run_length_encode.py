"""gpuprim.run_length_encode: fixed-capacity outputs with a device-side run count."""
from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors


@reports_input_errors
def run_length_encode(x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Run-length encoding of 1-D ``x``, without a host sync.

    Args:
        x: 1-D tensor, bool, integer or floating dtype, any length (64-bit sizes on CUDA too).

    Returns:
        ``(unique, counts, num_runs)``: ``unique`` (``x``'s dtype and size) holds the first element
        of each run, ``counts`` (int64, ``x``'s size) its length, both ZERO past ``num_runs`` (a
        1-element int64 tensor on ``x``'s device). ``unique[:r], counts[:r]`` with ``r = num_runs``
        equal ``torch.unique_consecutive(x, return_counts=True)``.

    Equality is the dtype's ``==``: NaN != NaN (each NaN is its own run) and -0.0 == +0.0 (one
    run; its unique value is the bits of the run's first element). Deterministic. Not
    differentiable (backward through it raises). CUDA: CUB's DeviceSelect::If picks the run heads
    (positions where the value changes), then one pass writes unique, counts and the zero tails.
    """
    unique, counts, num_runs = torch.ops.gpuprim.run_length_encode.default(x)
    return unique, counts, num_runs
