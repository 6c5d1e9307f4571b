"""gpuprim.unique: torch.unique's results, with a sync-free fixed-size form."""
from __future__ import annotations

from typing import Optional, Tuple, Union

import torch
from torch import Tensor

from gpuprim._errors import check_integer, reports_input_errors


@reports_input_errors
def unique(
    x: Tensor,
    *,
    sorted: bool = True,  # noqa: A002  (torch.unique's name)
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Optional[int] = None,
    size: Optional[int] = None,
    fill_value: Optional[Union[int, float, bool]] = None,
) -> Union[Tensor, Tuple[Tensor, ...]]:
    """The distinct values of ``x`` (flattened), like ``torch.unique``, optionally without a host sync.

    Args:
        x: bool, integer or floating tensor of any shape (flattened; 64-bit sizes).
        sorted: accepted for torch's signature; the values are ALWAYS ascending (as torch.unique on CUDA and,
            for these dtypes, on the CPU), so ``sorted=False`` gives the same result.
        return_inverse: also return each element's index into the distinct values (int64, ``x``'s shape).
        return_counts: also return how many times each distinct value occurs (int64).
        dim: only ``None`` (the flattened form) is supported.
        size: the sync-free form: ``values`` and ``counts`` have exactly ``size`` entries, the distinct values
            ascending, then ``fill_value`` (0 when None) and counts 0; one more output ``num_unique`` (a
            1-element int64 tensor on ``x``'s device) holds the true number of distinct values. If it exceeds
            ``size``, the smallest ``size`` values are returned and the rest dropped (never written out of
            bounds), and ``inverse`` still holds each element's true rank (which may be ``>= size``).
            Captures in CUDA graphs and compiles fullgraph.
        fill_value: the padding of ``values`` in the sized form (``x``'s dtype).

    Returns:
        Without ``size``: ``values`` (exactly the distinct values: ONE host sync reads their number), then
        ``inverse`` and ``counts`` if asked for, as ``torch.unique``. With ``size``: ``(values, [inverse],
        [counts], num_unique)``.

    Paths (CUDA): the sized form always sorts (a stable radix sort of the keys with positions, a scan of the run
    heads, linear passes). The exact form, for int32 / int64 inputs of at least 2^20 elements, first counts the
    distinct values in an L2-sized hash table (the sync reads how many) and sorts only those; past 2^21
    distinct values it gives up early and sorts. Both paths give the same bits.

    Equality and order are torch.unique's: ascending, -0.0 == +0.0 (the value kept is the bits of the first
    occurrence), NaN after every number and each NaN distinct (its own value, count 1), in position order.
    Deterministic (gpu_to_gpu): the result is a function of ``x`` alone on either path (a stable sort; the hash
    path sorts the distinct keys and counts integers), the same bits on any GPU and on the CPU. Not
    differentiable.
    """
    if dim is not None:
        raise ValueError(f"gpuprim.unique: dim must be None (the flattened form), got {dim!r}")
    if size is not None:
        check_integer("unique", "size", size)
    values, inverse, counts, num_unique = torch.ops.gpuprim.unique.default(
        x, return_inverse=return_inverse, return_counts=return_counts, size=size, fill_value=fill_value
    )
    if size is None:
        n = int(num_unique.item())  # the documented sync of the exact form
        values = values[:n]
        counts = counts[:n] if return_counts else counts
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    if size is not None:
        out.append(num_unique)
    return out[0] if len(out) == 1 else tuple(out)
