"""gpuprim.cumsum: prefix sums along a dim, bitwise reproducible."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors


@reports_input_errors
def cumsum(x: Tensor, dim: int = -1, *, exclusive: bool = False, reverse: bool = False,
           dtype: Optional[torch.dtype] = None) -> Tensor:
    """Cumulative sum of ``x`` along ``dim``, like :func:`torch.cumsum`.

    Args:
        x: tensor of any shape; bool, integer or floating dtype (fp16, bf16, fp32, fp64).
        dim: the dim to scan (negative counts from the end).
        exclusive: if True, ``out[i]`` is the sum of the elements before ``i`` (``out[0] = 0``).
        reverse: if True, scan from the end: ``out[i]`` sums ``x[i:]`` (or ``x[i+1:]`` if exclusive).
        dtype: as torch.cumsum's: ``x`` is cast to it first and the result has it (an integer dtype narrower
            than int64 wraps as two's complement, the scan itself being exact in int64).

    Returns:
        A contiguous tensor of ``x``'s shape. Without ``dtype``, bool and integer inputs give int64 (as
        torch.cumsum); floating inputs keep their dtype, and fp16/bf16 accumulate in fp32.

    Determinism: always bitwise reproducible run to run on the same device and build (the CUDA
    kernel adds in an order fixed by its launch constants, never by timing, unlike torch.cumsum
    on CUDA). CPU and CUDA float results may differ in the last bits (different summation order).
    Differentiable for floating inputs: the gradient is the reverse scan of the gradient.
    """
    if dtype is None:
        return torch.ops.gpuprim.cumsum.default(x, dim, exclusive=exclusive, reverse=reverse)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"gpuprim.cumsum: dtype must be a torch.dtype or None, got {dtype!r}")
    out = torch.ops.gpuprim.cumsum.default(x.to(dtype), dim, exclusive=exclusive, reverse=reverse)
    return out if out.dtype == dtype else out.to(dtype)
