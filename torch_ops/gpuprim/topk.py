"""gpuprim.topk: the k largest (or smallest) elements along a dim, with a stable tie contract."""
from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor

from gpuprim._errors import check_integer, reports_input_errors

# Looked up once: called per step on small batches, where the host's time is most of the call's.
_topk = torch.ops.gpuprim.topk.default


@reports_input_errors
def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> Tuple[Tensor, Tensor]:  # noqa: A002
    """The ``k`` largest (``largest=False``: smallest) elements of ``x`` along ``dim``, like ``torch.topk``.

    Args:
        x: tensor of any shape; floating (fp16, bf16, fp32, fp64) or integer dtype (not bool).
        k: how many to keep, ``0 <= k <= x.size(dim)`` (a 0-d ``x`` accepts 0 or 1 and returns itself).
        dim: the dim to select along (negative counts from the end).
        largest: keep the largest if True, else the smallest.
        sorted: accepted for torch compatibility; the order is always the sorted one (below).

    Returns:
        ``(values, indices)``, contiguous, ``x``'s shape with ``size(dim) == k``: ``values`` in ``x``'s dtype
        (bit copies of the chosen elements) and ``indices`` (int64) their positions along ``dim``.

    Contract (identical on CPU and CUDA, on every run): elements are ranked by value, best first; among
    equal values the lower index wins, both in which elements are chosen and in their order. NaN ranks above
    +inf (so NaNs come first if ``largest``, and are chosen last if not, like torch); -0.0 and +0.0 are equal.
    ``sorted=False`` returns this same order.

    Differentiable in ``x``: the gradient of ``values`` is scattered to ``indices`` (gpuprim::topk_backward).

    CUDA (one answer, so every path gives the CPU kernel's bits): rows of <= 512 elements with k <= 64 take
    one warp per row; k = 1 a block-wide argmax; other rows a radix select of the k-th key (one block per
    row, or several for few long rows) and a block sort of the k chosen (k > 2048: gpuprim.sort).
    Extra memory: O(rows) counters plus the outputs.
    """
    check_integer("topk", "k", k)
    values, indices = _topk(x, k, dim, largest, sorted)
    return values, indices
