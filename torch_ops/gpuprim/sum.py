"""gpuprim.sum and gpuprim.mean: reproducible (order-independent) reductions; exact integer sums."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors

Dims = Optional[Union[int, Sequence[int]]]


def _dims(dim: Dims) -> Optional[List[int]]:
    return [dim] if isinstance(dim, int) else (None if dim is None else list(dim))


@reports_input_errors
def sum(x: Tensor, dim: Dims = None, keepdim: bool = False, *, dtype: Optional[torch.dtype] = None) -> Tensor:  # noqa: A001
    """Sum of ``x`` over ``dim``, like :func:`torch.sum`, with results that never depend on order.

    Args:
        x: float16, bfloat16, float32, float64, (u)int8, int16, int32, int64 or bool tensor of any shape.
        dim: an int, a list of ints, or None (or []) for every dim.
        keepdim: keep the reduced dims with size 1.
        dtype: output dtype; default ``x.dtype`` for floating x and int64 for integer or bool x (as
            torch.sum). A floating dtype for floating x: unlike torch.sum, x is not cast first, the
            exact sum of x's values is rounded once to ``dtype``. When x's kind (floating or
            integer) differs from dtype's, x is cast to ``dtype`` first, as torch.sum does.

    Integer sums (integer or bool output) are int64 sums with two's-complement wrap-around, then
    cast to the output dtype: exact, so the same in any order (as torch.sum, bit for bit).

    Returns:
        The sums, in ``dtype``. Empty reductions give 0. NaN and inf propagate as in torch.sum
        (any NaN, or +inf together with -inf, gives NaN).

    Determinism: always bitwise reproducible, with no flag (gpuprim's determinism flag does not
    apply): the same bits on every run, for every launch configuration and input order (a
    permutation of x gives the same sum), for a row whatever the other rows of the batch, and on
    CPU and CUDA. The values are accumulated exactly on a fixed exponent grid (binned summation
    with integer bins; see csrc/prim/device/exact_sum/exact_sum.h), keeping every bit from 2^-32 (fp64: 2^-64)
    times max|x| up, then rounded once. Differentiable: the gradient is the output gradient
    broadcast over the reduced dims.
    """
    return torch.ops.gpuprim.sum.default(x, _dims(dim), keepdim, dtype=dtype)


@reports_input_errors
def mean(x: Tensor, dim: Dims = None, keepdim: bool = False, *, dtype: Optional[torch.dtype] = None) -> Tensor:
    """Mean of ``x`` over ``dim``, like :func:`torch.mean`; bitwise reproducible like :func:`gpuprim.sum`.

    x must be floating, or ``dtype`` floating (then x is cast to it first, as torch.mean does);
    an integer or bool x without a floating dtype raises TypeError (torch.mean raises too).
    The canonical sum is rounded to float64, divided by the number of reduced values in float64,
    and rounded once more to the output dtype. An empty reduction gives NaN (as torch.mean).
    The gradient is the output gradient broadcast over the reduced dims, divided by their count.
    """
    return torch.ops.gpuprim.mean.default(x, _dims(dim), keepdim, dtype=dtype)


def _set_reduce_config(blocks: int = 0, threads: int = 0) -> None:
    """Test-only: launch configuration of sum/mean (0 = automatic). CUDA: grid and block size;
    CPU: chunks per row and interleaved accumulators per chunk. Results never depend on it."""
    torch.ops.gpuprim._set_reduce_config.default(blocks, threads)
