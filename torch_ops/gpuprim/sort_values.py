"""gpuprim.sort_values: the sorted values along a dim, without their positions."""
from __future__ import annotations

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors


@reports_input_errors
def sort_values(x: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    """The ``values`` of :func:`gpuprim.sort` alone: ``torch.sort(x, dim, descending=descending, stable=True).values``.

    Args:
        x: tensor of any shape; bool, integer or floating dtype.
        dim: the dim to sort (negative counts from the end).
        descending: largest first if True.

    Returns:
        A contiguous tensor of ``x``'s shape and dtype, bit copies of its elements in :func:`gpuprim.sort`'s
        order (NaN above every number; -0.0 and +0.0 equal, in their input order). Deterministic.

    CUDA: one row of int32 or int64 (every other dim of size 1, any length) goes to CUB's keys-only radix
    sort: no positions are carried or written (256M int32: about half the time of :func:`gpuprim.sort`; past
    2^31 elements, about a third of its memory). Other inputs cost what :func:`gpuprim.sort` costs.
    Differentiable in ``x``: with ``x.requires_grad`` it runs :func:`gpuprim.sort` to know where the gradient
    goes.
    """
    return torch.ops.gpuprim.sort_values.default(x, dim, descending=descending)
