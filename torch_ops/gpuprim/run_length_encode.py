"""gpuprim.run_length_encode: fixed-capacity outputs with a device-side run count."""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from gpuprim._errors import check_integer, reports_input_errors


@reports_input_errors
def run_length_encode(
    x: Tensor, *, return_inverse: bool = False, dim: Optional[int] = None
) -> Union[Tuple[Tensor, Tensor, Tensor], Tuple[Tensor, Tensor, Tensor, Tensor]]:
    """Run-length encoding of 1-D ``x`` (or of its slices along ``dim``), without a host sync.

    Args:
        x: 1-D tensor (any rank with ``dim``), bool, integer or floating dtype, any length (64-bit sizes on CUDA
            too).
        return_inverse: also return ``inverse`` (int64, one entry per element, or per slice with ``dim``): the
            run of each, as ``torch.unique_consecutive(x, return_inverse=True, dim=dim)``'s (a scan of the run
            heads; no sync).
        dim: ``torch.unique_consecutive(x, dim=dim)``: runs of equal consecutive slices ``x.select(dim, i)``
            (equal when every element is). As torch, ``x`` may have no empty dimension other than ``dim``.

    Returns:
        ``(unique, counts, num_runs)``: ``unique`` (``x``'s dtype and size) holds the first element
        of each run, ``counts`` (int64, ``x``'s size) its length, both ZERO past ``num_runs`` (a
        1-element int64 tensor on ``x``'s device). ``unique[:r], counts[:r]`` with ``r = num_runs``
        equal ``torch.unique_consecutive(x, return_counts=True)``. With ``dim``: ``unique`` has ``x``'s shape,
        the first slice of each run along ``dim`` then zero slices, ``counts`` has ``x.size(dim)`` entries, and
        ``unique.narrow(dim, 0, r), counts[:r]`` equal ``torch.unique_consecutive(x, return_counts=True,
        dim=dim)``. Then ``inverse`` if asked for.

    Equality is the dtype's ``==``: NaN != NaN (each NaN is its own run, and so is each slice holding one)
    and -0.0 == +0.0 (one run; its unique value is the bits of the run's first element). Deterministic. Not
    differentiable (backward through it raises). CUDA: one pass counts each tile's run heads (positions where
    the value changes), a scan of those counts, then a pass writes unique and counts. With ``dim``: the heads of
    slices (an element of a slice unequal to the one above it marks the slice), a scan of them, the run starts
    and the first slices gathered: x read about twice, unique written once.
    """
    if dim is not None:
        check_integer("run_length_encode", "dim", dim)
    unique, counts, num_runs = torch.ops.gpuprim.run_length_encode.default(x, dim=dim)
    if not return_inverse:
        return unique, counts, num_runs
    if dim is None or x.dim() == 1:
        heads = torch.ne(x[1:], x[:-1])  # the dtype's == (NaN: a run of its own), as the op
    else:
        rows = x.movedim(dim, 0).flatten(1)  # [slices, elements of a slice]; none empty (the op checked)
        heads = torch.ne(rows[1:], rows[:-1]).any(dim=1)
    heads = heads.to(torch.int64)
    m = x.shape[0 if dim is None else dim]
    inverse = torch.cat([heads.new_zeros(min(m, 1)), torch.cumsum(heads, 0)])
    return unique, counts, num_runs, inverse
