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
    """The distinct values of ``x`` (flattened), or slices along ``dim``, like ``torch.unique``, optionally without a
    host sync.

    Args:
        x: bool, integer or floating tensor of any shape (flattened without ``dim``; 64-bit sizes).
        sorted: accepted for torch's signature; the values are ALWAYS ascending (as torch.unique on CUDA and,
            for these dtypes, on the CPU), so ``sorted=False`` gives the same result.
        return_inverse: also return each element's index into the distinct values (int64, ``x``'s shape).
        return_counts: also return how many times each distinct value occurs (int64).
        dim: ``torch.unique(x, dim=dim)``: the slices ``x.select(dim, i)`` are the elements. ``values`` is ``x`` with
            ``dim``'s size made the number of distinct slices (with ``size``: ``size``), the distinct slices in
            lexicographic order (the first unequal element decides, in torch.sort's order of the dtype);
            ``inverse`` has ``x.size(dim)`` entries, each slice's index into them; ``counts`` one per distinct
            slice. Two slices are equal when every element is (``==``: -0.0 == +0.0, and a slice holding a NaN
            equals no other slice, as in torch). As torch, ``x`` must be at least 1-D and may have no empty
            dimension other than ``dim``. ``x`` of two or more dimensions always takes the sort path (a 1-D
            ``x`` is the flattened form): ``ceil(slice bytes / 8)`` stable radix sorts of ``x.size(dim)``
            64-bit keys (several narrow columns packed per key), so narrow slices are cheap and very wide ones
            cost a sort per 8 bytes of slice.
        size: the sync-free form: ``values`` and ``counts`` have exactly ``size`` entries (slices along ``dim``
            with ``dim``), the distinct values ascending, then ``fill_value`` (0 when None) and counts 0; one
            more output ``num_unique`` (a 1-element int64 tensor on ``x``'s device) holds the true number of
            distinct values. If it exceeds
            ``size``, the smallest ``size`` values are returned and the rest dropped (never written out of
            bounds), and ``inverse`` still holds each element's true rank (which may be ``>= size``).
            Captures in CUDA graphs and compiles fullgraph.
        fill_value: the padding of ``values`` in the sized form (``x``'s dtype; with ``dim`` every element of a
            padding slice).

    Returns:
        Without ``size``: ``values`` (exactly the distinct values: ONE host sync reads their number), then
        ``inverse`` and ``counts`` if asked for, as ``torch.unique``. With ``size``: ``(values, [inverse],
        [counts], num_unique)``.

    Paths (CUDA): the sized form always sorts (a stable radix sort of the keys with positions, a scan of the run
    heads, linear passes). The exact form, for int32 / int64 inputs of at least 2^22 elements, first counts the
    distinct values in an L2-sized hash table (the sync reads how many) and sorts only those; past 2^21
    distinct values it gives up early and sorts. Both paths give the same bits.

    Equality and order are torch.unique's: ascending, -0.0 == +0.0 (the value kept is the bits of the first
    occurrence), NaN after every number and each NaN distinct (its own value, count 1), in position order.
    With ``dim``, slices holding NaNs: each is distinct (as torch), and they are ordered with NaN above every number
    in its column, ties in position order. torch.unique(dim=) compares with ``<``, under which a NaN is neither
    above nor below anything, so its order of such slices depends on its sort's steps (not a total order);
    gpuprim's is a fixed function of ``x``: the same set of slices, counts and inverse up to that order.
    Without NaNs the result equals torch's (values compared by value: which zero's sign is kept is the first
    occurrence's).
    Deterministic (gpu_to_gpu): the result is a function of ``x`` alone on either path (a stable sort; the hash
    path sorts the distinct keys and counts integers), the same bits on any GPU and on the CPU. Not
    differentiable.
    """
    if size is not None:
        check_integer("unique", "size", size)
    if dim is not None:
        check_integer("unique", "dim", dim)
    values, inverse, counts, num_unique = torch.ops.gpuprim.unique.default(
        x, return_inverse=return_inverse, return_counts=return_counts, size=size, fill_value=fill_value, dim=dim
    )
    if size is None:
        n = int(num_unique.item())  # the documented sync of the exact form
        values = values[:n] if dim is None else values.narrow(dim, 0, n)
        counts = counts[:n] if return_counts else counts
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    if size is not None:
        out.append(num_unique)
    return out[0] if len(out) == 1 else tuple(out)
