"""gpuprim.sort and gpuprim.argsort: stable radix sort along a dim, deterministic."""
from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors


@reports_input_errors
def sort(x: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = True) -> Tuple[Tensor, Tensor]:
    """Sorts ``x`` along ``dim``, like ``torch.sort(x, dim, descending=descending, stable=True)``.

    Args:
        x: tensor of any shape; bool, integer or floating dtype (fp16, bf16, fp32, fp64).
        dim: the dim to sort (negative counts from the end).
        descending: largest first if True.
        stable: accepted for torch.sort's signature; the sort is always stable (a stable order is
            also a valid answer to ``stable=False``).

    Returns:
        ``(values, indices)``, both contiguous with ``x``'s shape: ``values`` in ``x``'s dtype (bit
        copies of its elements) and ``indices`` (int64) the positions along ``dim`` they came from.

    Order: always stable (equal elements keep their input order, also when descending). NaN sorts
    above every number (last ascending, first descending), whatever its sign bit; -0.0 and +0.0
    compare equal. This is the order torch.sort documents; the tests check indices equal to those
    of ``torch.sort(..., stable=True)`` on the CPU, and values bit for bit.

    Determinism: the result is a function of the input alone (a stable sort has one answer), so
    it is bitwise identical on every run and every GPU, and equal to the CPU kernel's.
    Differentiable in ``x``: the gradient of ``values`` is scattered back through ``indices``.

    CUDA: rows of up to 2048 elements are sorted by one thread block each (CUB's BlockRadixSort);
    longer rows go to CUB's onesweep device radix sort on order-preserving unsigned keys (the row
    number packed above the key when there are several rows), with 32-bit positions as payload.
    """
    del stable  # always stable
    values, indices = torch.ops.gpuprim.sort.default(x, dim, descending=descending)
    return values, indices


@reports_input_errors
def argsort(x: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = True) -> Tensor:
    """The ``indices`` of :func:`sort`: like ``torch.argsort(x, dim, descending=descending, stable=True)``
    (``stable`` as in :func:`sort`: always stable)."""
    del stable  # always stable
    return torch.ops.gpuprim.sort.default(x, dim, descending=descending)[1]
