"""gpuprim.spmm and gpuprim.csr_transpose: CSR x dense products, deterministic and equal on CPU and CUDA."""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating


def _unpack_csr(
    crow: Tensor, col: Optional[Tensor], values: Optional[Tensor], dense: Optional[Tensor]
) -> Tuple[Tensor, Tensor, Optional[Tensor], Tensor]:
    """spmm(A_csr, dense) with a torch.sparse_csr tensor: its structure and values."""
    if col is not None and dense is None and crow.layout == torch.sparse_csr:
        dense, col = col, None
    if crow.layout != torch.sparse_csr:
        if col is None or dense is None:
            raise TypeError("gpuprim.spmm: expected (crow, col, values, dense) or (sparse_csr, dense)")
        return crow, col, values, dense
    if col is not None or dense is None:
        raise TypeError("gpuprim.spmm: with a torch.sparse_csr matrix, pass (matrix, dense)")
    if crow.dim() != 2:
        raise ValueError(f"gpuprim.spmm: the sparse_csr matrix must be 2-D, got {crow.dim()}-D")
    if crow.size(1) != dense.size(0):
        raise ValueError(f"gpuprim.spmm: dense must have the matrix's {crow.size(1)} columns as rows, "
                         f"got {dense.size(0)}")
    return crow.crow_indices(), crow.col_indices(), crow.values() if values is None else values, dense


@reports_input_errors
def spmm(
    crow: Tensor,
    col: Optional[Tensor] = None,
    values: Optional[Tensor] = None,
    dense: Optional[Tensor] = None,
    reduce: str = "sum",
) -> Tensor:
    """Sparse (CSR) times dense: ``out[r] = reduce over the nonzeros k of row r of values[k] * dense[col[k]]``.

    Call as ``spmm(crow, col, values, dense)`` or ``spmm(A, dense)`` with ``A`` a 2-D ``torch.sparse_csr``
    tensor (``A.shape[1] == dense.shape[0]``).

    Args:
        crow: 1-D int32 or int64 row offsets ``[rows + 1]``: ``crow[0] == 0``, non-decreasing, ``crow[-1] == nnz``.
        col: 1-D column of each nonzero ``[nnz]``, crow's dtype, in ``[0, dense.size(0))``.
        values: 1-D ``[nnz]`` of dense's dtype, or None for an unweighted graph (every value 1).
        dense: ``[cols]`` (SpMV) or ``[cols, F]``, fp16, bf16, fp32 or fp64; any strides.
        reduce: ``"sum"``, ``"mean"`` (sum over the row's length), ``"max"`` or ``"min"`` (NaN propagates).

    Returns:
        ``[rows]`` or ``[rows, F]`` of dense's dtype; empty rows give 0. fp16/bf16 accumulate in fp32.

    Order and determinism: each row's nonzeros are cut into chunks from its first one (256 for F = 1, else
    max(256, 16 F)); a chunk is reduced by 32 lanes, each folding every 32nd nonzero, then a fixed tree (F = 1),
    or left to right per column (F > 1), with fused multiply-adds; the chunk values fold left to right. The order
    depends on the row alone, so results are bitwise reproducible (gpu_to_gpu, whatever the flag) and the CPU
    kernel gives the same bits as the CUDA kernel. No host sync; no float atomics.

    Bad structure raises on the CPU (ValueError / IndexError naming crow or col), and on CUDA in validate mode
    (:func:`gpuprim.set_validate`, a sync). Otherwise on CUDA, bad crow entries are clamped and bad col entries
    skipped, and the next gpuprim call raises :class:`gpuprim.InputError`.

    Differentiable in ``values`` and ``dense``. ``sum`` / ``mean``: dense's gradient is the transposed product,
    through :func:`csr_transpose`; values' is the registered ``gpuprim::spmm_backward``. ``max`` / ``min``: each
    output element's gradient goes to one nonzero of its row, the first (in the row's order) whose product
    attains the extreme, or the first NaN product where the output is NaN (torch's amax splits it among ties);
    ATen ops over the recomputed ``[nnz, F]`` products, gpuprim's exact sum for values and its deterministic
    ``index_add`` for dense: the same bits on every run (values' gradient also CPU == CUDA).
    """
    crow, col, values, dense = _unpack_csr(crow, col, values, dense)
    if is_validating():
        _validate_csr("spmm", crow, col, dense.size(0) if dense.dim() > 0 else 0)
    return torch.ops.gpuprim.spmm.default(crow, col, values, dense, reduce)


@reports_input_errors
def csr_transpose(crow: Tensor, col: Tensor, num_cols: int) -> Tuple[Tensor, Tensor, Tensor]:
    """The transposed structure of a CSR matrix ``[rows, num_cols]``: ``(crow_t, col_t, perm)``.

    ``crow_t`` ``[num_cols + 1]`` and ``col_t`` ``[nnz]`` (row ids, crow's dtype) describe the transpose, each
    of its rows in increasing order; ``perm`` (int64 ``[nnz]``) says which input nonzero each output nonzero is,
    so the transpose's values are ``values[perm]``: compute the structure once and reuse it while values change.
    Exact integers (a stable radix sort on CUDA, a counting sort on the CPU): the same on both. No host sync.
    Bad structure raises on the CPU; on CUDA it is recorded (:class:`gpuprim.InputError` at the next call).
    """
    if is_validating():
        _validate_csr("csr_transpose", crow, col, num_cols)
    return torch.ops.gpuprim.csr_transpose.default(crow, col, num_cols)


def _validate_csr(op: str, crow: Tensor, col: Tensor, num_cols: int) -> None:
    """Validate mode (gpuprim.set_validate): the CSR rules checked on the host at the call, in the wording the
    CPU kernels and the device records use."""
    if crow.dim() != 1 or col.dim() != 1 or crow.numel() == 0 or crow.is_floating_point():
        return  # the op's own checks report shapes and dtypes
    c = crow.long().cpu()
    if int(c[0]) != 0:
        raise ValueError(f"gpuprim.{op}: crow[0] = {int(c[0])} must be 0")
    steps = c[1:] - c[:-1]
    if bool((steps < 0).any()):
        r = int(torch.nonzero(steps < 0)[0]) + 1
        raise ValueError(f"gpuprim.{op}: crow[{r}] = {int(c[r])} is less than crow[{r - 1}] = {int(c[r - 1])} "
                         "(crow must be non-decreasing)")
    nnz = col.numel()
    if int(c[-1]) != nnz:
        last = int(c[-1])
        rule = (f"is past the end: greater than {nnz}, the length it indexes" if last > nnz
                else f"must be {nnz}, the length it must cover")
        raise ValueError(f"gpuprim.{op}: crow[{c.numel() - 1}] = {last} {rule}")
    k = col.long().cpu()
    bad = (k < 0) | (k >= num_cols)
    if bool(bad.any()):
        at = int(torch.nonzero(bad)[0])
        raise IndexError(f"gpuprim.{op}: col[{at}] = {int(k[at])} is out of range for dimension 0 of size {num_cols}")
