"""gpuprim.compact: stream compaction into a fixed-capacity output with a device-side count (no sync).
gpuprim.masked_select (masked_select.py) is the exact-size form, which syncs."""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor
from torch.types import Number

from gpuprim._errors import reports_input_errors


@reports_input_errors
def compact(x: Tensor, mask: Tensor, *, fill_value: Optional[Number] = 0) -> Tuple[Tensor, Tensor]:
    """Keeps the elements of ``x`` where ``mask`` is set, in order, without a host sync.

    Args:
        x: tensor of any shape; bool, integer or floating dtype. Flattened row-major
            (non-contiguous inputs are read as if made contiguous).
        mask: bool tensor of ``x``'s shape, on ``x``'s device.
        fill_value: what fills the tail of ``out`` (converted to ``x``'s dtype; a value the dtype
            cannot hold is a ValueError), like ``torch.nonzero_static``'s. ``None`` leaves the tail
            unwritten — arbitrary values, like ``torch.empty`` — and saves the tail's writes.

    Returns:
        ``(out, count)``: ``out`` is 1-D with ``x.numel()`` elements of ``x``'s dtype: the kept
        elements first (bit copies, in row-major order, like ``x[mask]``), then ``fill_value``;
        ``count`` is a 1-element int64 tensor on ``x``'s device, the number kept. ``out[:count]``
        equals ``torch.masked_select(x, mask)``.

    Deterministic (a compaction has one answer; with ``fill_value=None`` only ``out[:count]`` is
    defined). Differentiable in floating ``x``: the gradient of ``x`` is ``grad_out`` gathered back
    to the kept positions, zero elsewhere (the tail of ``out`` gets no gradient to anything).
    CUDA: one pass over x and the mask, or from 128 MiB of x two (the mask's kept counts per tile
    first); 64-bit sizes, no host sync.
    """
    out, count = torch.ops.gpuprim.compact.default(x, mask, fill_value=fill_value)
    return out, count

