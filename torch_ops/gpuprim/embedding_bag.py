"""gpuprim.embedding_bag: torch.nn.functional.embedding_bag with a deterministic sort-based backward."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating


@reports_input_errors
def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Optional[Tensor] = None,
    mode: str = "mean",
    per_sample_weights: Optional[Tensor] = None,
    padding_idx: Optional[int] = None,
    include_last_offset: bool = False,
    sparse: bool = False,
    max_norm: Optional[float] = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
) -> Tensor:
    """Sums, averages or max-reduces bags of rows of ``weight``, as :func:`torch.nn.functional.embedding_bag`.

    Args:
        weight: ``[num_embeddings, D]`` float16, bfloat16, float32 or float64 (16-bit accumulate in fp32).
        indices: int32 or int64 row ids: 1-D with ``offsets``, or 2-D ``[num_bags, N]`` (each row one bag,
            ``offsets`` must be None; ``include_last_offset`` then has no effect, as in torch).
        offsets: 1-D int32 or int64 start of each bag in ``indices``; with ``include_last_offset`` one more
            entry, the end of the last bag. Otherwise the last bag ends at ``len(indices)``.
        mode: ``"sum"``, ``"mean"`` or ``"max"`` (torch's default is ``"mean"``).
        per_sample_weights: weight's dtype and indices' shape, scales each row (``mode="sum"`` only).
        padding_idx: a row (negative counts from the end) skipped wherever it appears: not summed, not
            counted by mean, not a candidate for max, and it gets no gradient.
        include_last_offset: whether ``offsets`` ends with the end of the last bag (``len(indices)``, as
            torch documents it; validate mode checks it. Otherwise that value is used as the end and indices
            past it belong to no bag, where torch's CPU kernel runs the last bag to ``len(indices)``).
        sparse: the gradient of ``weight`` is a sparse COO tensor (coalesced: the distinct rows, sorted, and
            their gradient rows) instead of a dense one. Not with ``mode="max"`` (as torch). Sizing it syncs.
        max_norm: as torch, first renormalizes in place (under no_grad) every row of ``weight`` that ``indices``
            refers to (padding_idx's row included, as torch) whose ``norm_type``-norm exceeds ``max_norm``:
            the row is scaled by ``max_norm / (norm + 1e-7)`` (torch.embedding_renorm_). A gather, a norm and
            a scatter of the looked-up rows (fp32 math for 16-bit weights): no host sync. Duplicated indices
            compute and write the same row, so each row is renormalized once.
        norm_type: the p of the norm used with ``max_norm`` (torch's default 2).
        scale_grad_by_freq: the gradient of each weight row is divided by the number of times the row occurs
            in ``indices`` (the used ones), as torch. Not with ``mode="max"`` (ValueError, as torch). Also with
            ``sparse=True`` (where torch's backward raises).

    Returns:
        ``[num_bags, D]`` of weight's dtype. Empty bags (and bags of padding only) give 0 in every mode.
        max: the first maximum in bag order wins ties and gets the gradient.

    Bad input: indices outside ``[0, num_embeddings)`` and offsets that are not ``offsets[0] == 0``,
    non-decreasing, ``<= len(indices)`` raise only in validate mode (:func:`gpuprim.set_validate`; it reads the
    data on the host). Otherwise out-of-range indices are skipped like ``padding_idx`` and offsets are clamped
    into ``[0, len(indices)]`` (a decreasing pair gives an empty bag): memory-safe, never an out-of-bounds access.

    Gradient: the registered op ``gpuprim::embedding_bag_backward`` sorts (row, position) pairs with a radix
    sort, then sums each row's contributions in position order in fp32 (hot rows in fixed-size chunks combined
    in chunk order): bitwise identical on every run, in every mode, whatever the determinism flag.
    per_sample_weights get ``dot(grad[bag], weight[row])`` (0 for skipped indices).
    """
    if padding_idx is not None and padding_idx < 0:
        padding_idx = padding_idx + weight.size(0) if padding_idx >= -weight.size(0) else padding_idx
    if is_validating():
        _validate(weight, indices, offsets, include_last_offset)
    if max_norm is not None:
        embedding_bag_renorm_(weight, indices, max_norm, norm_type)
    out, _, _ = torch.ops.gpuprim.embedding_bag.default(
        weight, indices, offsets, mode, per_sample_weights, padding_idx, include_last_offset, sparse,
        scale_grad_by_freq,
    )
    return out


def embedding_bag_renorm_(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float = 2.0) -> Tensor:
    """torch.embedding_renorm_ under no_grad: the rows of ``weight`` that ``indices`` refers to whose
    ``norm_type``-norm exceeds ``max_norm`` are scaled in place by ``max_norm / (norm + 1e-7)``. Returns weight.

    Tensor ops on the looked-up rows only (gather, norm, scatter back): no host sync. Out-of-range indices
    (an error the lookup reports) are clamped into the table here so that the gather stays in bounds.
    """
    rows = weight.size(0)
    if indices.numel() == 0 or rows == 0 or weight.dim() != 2:
        return weight  # the op reports bad shapes
    with torch.no_grad():
        w = weight.detach()
        idx = indices.reshape(-1).long().clamp(0, rows - 1)
        acc = torch.float64 if w.dtype == torch.float64 else torch.float32
        picked = w.index_select(0, idx)
        norms = torch.linalg.vector_norm(picked, norm_type, dim=1, dtype=acc).double()
        scale = torch.where(norms > max_norm, max_norm / (norms + 1e-7), torch.ones_like(norms))
        w.index_copy_(0, idx, (picked.to(acc) * scale.to(acc).unsqueeze(1)).to(w.dtype))
    return weight


def _validate(weight: Tensor, indices: Tensor, offsets: Optional[Tensor], include_last_offset: bool) -> None:
    if weight.dim() != 2 or indices.is_floating_point() or indices.dim() not in (1, 2):
        return  # the op's own checks report shape and dtype errors
    rows = weight.size(0)
    if indices.numel() > 0:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= rows:
            bad = low if low < 0 else high
            raise IndexError(f"gpuprim.embedding_bag: indices must be in [0, {rows}), got {bad}")
    if indices.dim() != 1 or offsets is None or offsets.dim() != 1 or offsets.numel() == 0:
        return
    if offsets.is_floating_point():
        return
    n = indices.numel()
    first, last = int(offsets[0]), int(offsets[-1])
    if first != 0:
        raise ValueError(f"gpuprim.embedding_bag: offsets[0] must be 0, got {first}")
    if last > n:
        raise ValueError(f"gpuprim.embedding_bag: offsets[-1] must be <= len(indices) = {n}, got {last}")
    if include_last_offset and last != n:
        raise ValueError(f"gpuprim.embedding_bag: offsets[-1] must be len(indices) = {n} with "
                         f"include_last_offset=True, got {last}")
    if offsets.numel() > 1:
        steps = offsets[1:] - offsets[:-1]
        if bool((steps < 0).any()):
            bad = int(torch.nonzero(steps < 0)[0])
            raise ValueError(
                f"gpuprim.embedding_bag: offsets must be non-decreasing, got offsets[{bad}] = "
                f"{int(offsets[bad])} > offsets[{bad + 1}] = {int(offsets[bad + 1])}"
            )
