"""gpuprim.run_length_encode: fixed-capacity outputs with a device-side run count."""
from __future__ import annotations

from typing import Tuple, Union

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors


@reports_input_errors
def run_length_encode(
    x: Tensor, *, return_inverse: bool = False
) -> Union[Tuple[Tensor, Tensor, Tensor], Tuple[Tensor, Tensor, Tensor, Tensor]]:
    """Run-length encoding of 1-D ``x``, without a host sync.

    Args:
        x: 1-D tensor, bool, integer or floating dtype, any length (64-bit sizes on CUDA too).
        return_inverse: also return ``inverse`` (int64, ``x``'s size): the run of each element, as
            ``torch.unique_consecutive(x, return_inverse=True)``'s (a scan of the run heads; no sync).

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
    if not return_inverse:
        return unique, counts, num_runs
    heads = torch.ne(x[1:], x[:-1]).to(torch.int64)  # the dtype's == (NaN: a run of its own), as the op
    inverse = torch.cat([heads.new_zeros(min(x.numel(), 1)), torch.cumsum(heads, 0)])
    return unique, counts, num_runs, inverse
