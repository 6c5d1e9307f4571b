"""gpuprim.index_add / scatter_add / scatter_reduce: torch's semantics, deterministic on demand."""
from __future__ import annotations

from typing import Union

import torch
from torch import Tensor

from gpuprim._determinism import is_deterministic
from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating


@reports_input_errors
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Union[int, float] = 1) -> Tensor:
    """Out-of-place :func:`torch.index_add`: ``out = input.clone(); out.index_select(dim, index[i]) += alpha * source
    .select(dim, i)`` for every ``i``.

    Args:
        input: tensor of bool/uint8/int8/int16/int32/int64/float16/bfloat16/float32/float64 (bool, as
            torch: a logical or of ``input`` with the added rows, none when ``alpha`` is false).
        dim: the dim of ``input`` that ``index`` addresses (negative counts from the end).
        index: 1-D (or 0-d) int64 or int32 tensor of ``source.size(dim)`` row numbers in ``[0, input.size(dim))``;
            repeats accumulate.
        source: tensor of input's dtype and shape, except ``source.size(dim) == len(index)``.
        alpha: scale of ``source`` (an integer for integer tensors).

    Returns:
        A new contiguous tensor of input's shape and dtype. Each destination row is the sum (in fp32 for
        16/32-bit floats, fp64 for float64, int64 for integers, wrapping like torch) of its source rows, scaled
        by alpha, then added to ``input`` once.

    Out-of-range indices raise IndexError on the CPU; on CUDA they are skipped (no sync) unless validate mode
    is on (:func:`gpuprim.set_validate`), which raises IndexError.

    Determinism: with gpuprim's flag on (:func:`gpuprim.set_deterministic`, default: follow
    torch.use_deterministic_algorithms) the CUDA result is bitwise identical run to run (sorted destinations,
    sums in original index order with fixed chunking of very long runs). With the flag off, fp32/fp64/int32/int64
    use one atomicAdd per element (fast, float results vary in the last bits). The CPU always sums in order.

    Differentiable like torch's: ``grad_input = grad``, ``grad_source = alpha * grad.index_select(dim, index)``.
    """
    if is_validating():
        _validate_index("index_add", index, input.size(dim) if input.dim() > 0 else 1)
    return torch.ops.gpuprim.index_add.default(
        input, dim, index, source, alpha=alpha, deterministic=is_deterministic()
    )


@reports_input_errors
def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str = "sum", *, include_self: bool = True
) -> Tensor:
    """Out-of-place :func:`torch.scatter_reduce` for ``reduce`` in ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``,
    ``"amin"``.

    ``out[... index[i][j][k] ...] (reduce)= src[i][j][k]`` along ``dim`` for every element of ``index``;
    positions that receive nothing keep ``input``'s value. With ``include_self`` the original ``input`` value
    takes part in the reduction (and in the mean's count), without it only the scattered values do.

    Args:
        input: tensor of bool/uint8/int8/int16/int32/int64/float16/bfloat16/float32/float64 (bool, as torch:
            sum and amax are a logical or, prod and amin a logical and; mean raises TypeError).
        dim: the dim that ``index`` addresses (negative counts from the end).
        index: int64 (or int32) tensor with input's number of dims, ``index.size(d) <= src.size(d)`` for every d
            and ``<= input.size(d)`` for ``d != dim``; values in ``[0, input.size(dim))``.
        src: tensor of input's dtype and number of dims (only its ``index``-shaped corner is read).
        reduce: ``"sum"``, ``"prod"`` (integers wrap, as torch), ``"mean"`` (integers round down, as torch),
            ``"amax"`` or ``"amin"`` (NaN propagates).
        include_self: whether input's values take part.

    Returns:
        A new contiguous tensor of input's shape and dtype; sums/means/products accumulate in fp32 (16/32-bit
        floats), fp64 or int64 before one rounding, in index order.

    Out-of-range indices and determinism: as :func:`index_add` (only ``"sum"`` with ``include_self`` ever uses
    atomics; the other reductions always take the sorted, bitwise reproducible path on CUDA).

    Differentiable like torch's (amax/amin share the gradient evenly among ties; prod divides the product by
    a factor, or recomputes the product without it where it is a destination's only zero); src entries outside
    index's shape get a zero gradient.
    """
    if is_validating():
        _validate_index("scatter_reduce", index, input.size(dim) if input.dim() > 0 else 1)
    return torch.ops.gpuprim.scatter_reduce.default(
        input, dim, index, src, reduce, include_self=include_self, deterministic=is_deterministic()
    )


@reports_input_errors
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Out-of-place :func:`torch.scatter_add`: ``scatter_reduce(input, dim, index, src, "sum", include_self=True)``.

    See :func:`scatter_reduce` for the arguments, out-of-range indices, determinism and gradients.
    """
    if is_validating():
        _validate_index("scatter_add", index, input.size(dim) if input.dim() > 0 else 1)
    return torch.ops.gpuprim.scatter_add.default(input, dim, index, src, deterministic=is_deterministic())


@reports_input_errors
def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Union[int, float] = 1) -> Tensor:
    """In-place :func:`index_add` (like :meth:`torch.Tensor.index_add_`): adds into ``input`` and returns it.

    Same arguments, values, out-of-range handling and determinism as :func:`index_add`; a contiguous ``input``
    on CUDA is updated without a temporary copy. Not differentiable (an error if a gradient is needed).
    """
    if is_validating():
        _validate_index("index_add_", index, input.size(dim) if input.dim() > 0 else 1)
    torch.ops.gpuprim.index_add_.default(input, dim, index, source, alpha=alpha, deterministic=is_deterministic())
    return input


@reports_input_errors
def scatter_reduce_(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str = "sum", *, include_self: bool = True
) -> Tensor:
    """In-place :func:`scatter_reduce` (like :meth:`torch.Tensor.scatter_reduce_`): updates ``input``, returns it.

    Same arguments, values, out-of-range handling and determinism as :func:`scatter_reduce`. Not differentiable.
    """
    if is_validating():
        _validate_index("scatter_reduce_", index, input.size(dim) if input.dim() > 0 else 1)
    torch.ops.gpuprim.scatter_reduce_.default(
        input, dim, index, src, reduce, include_self=include_self, deterministic=is_deterministic()
    )
    return input


@reports_input_errors
def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place :func:`scatter_add`: ``scatter_reduce_(input, dim, index, src, "sum", include_self=True)``."""
    if is_validating():
        _validate_index("scatter_add_", index, input.size(dim) if input.dim() > 0 else 1)
    torch.ops.gpuprim.scatter_add_.default(input, dim, index, src, deterministic=is_deterministic())
    return input


def _validate_index(op: str, index: Tensor, rows: int) -> None:
    if index.numel() == 0 or index.is_floating_point():
        return  # the op's own checks report dtype errors
    low, high = int(index.min()), int(index.max())
    if low < 0 or high >= rows:
        bad = low if low < 0 else high
        raise IndexError(f"gpuprim.{op}: index must be in [0, {rows}), got {bad}")
