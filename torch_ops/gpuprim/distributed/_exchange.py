"""The token exchange: torch.distributed.all_to_all_single with autograd (the backward is the reverse exchange)."""
from __future__ import annotations

from typing import Any, List, Optional

import torch
import torch.distributed as dist
from torch import Tensor


def exchange_rows(x: Tensor, out_splits: Optional[List[int]], in_splits: Optional[List[int]],
                  group: Optional[dist.ProcessGroup]) -> Tensor:
    """Rows of x go to the ranks in order (in_splits rows each, equal parts when None); returns the rows received,
    out_splits from each rank (equal parts when None). Not differentiable: see :class:`AllToAll`."""
    rows = sum(out_splits) if out_splits is not None else x.size(0)
    out = x.new_empty((rows,) + tuple(x.shape[1:]))
    dist.all_to_all_single(out, x.contiguous(), out_splits, in_splits, group=group)
    return out


class AllToAll(torch.autograd.Function):
    """Differentiable exchange_rows: the gradient of the rows received travels back the way they came."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, out_splits: Optional[List[int]], in_splits: Optional[List[int]],
                group: Optional[dist.ProcessGroup]) -> Tensor:
        ctx.out_splits, ctx.in_splits, ctx.group = out_splits, in_splits, group
        return exchange_rows(x, out_splits, in_splits, group)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Optional[Tensor], None, None, None]:
        return exchange_rows(grad, ctx.in_splits, ctx.out_splits, ctx.group), None, None, None


def all_to_all(x: Tensor, out_splits: Optional[List[int]], in_splits: Optional[List[int]],
               group: Optional[dist.ProcessGroup]) -> Tensor:
    result: Tensor = AllToAll.apply(x, out_splits, in_splits, group)
    return result
