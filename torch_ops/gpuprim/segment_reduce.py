"""gpuprim.segment_reduce: sum/mean/max/min/prod over CSR segments of rows, deterministic and sync-free."""
from __future__ import annotations

from typing import Optional, Union

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating


def _check_lengths(lengths: Tensor) -> None:
    """A negative length raises naming it (the offsets made from it would name an offset instead) where reading
    it needs no sync: on the CPU, or in validate mode. CUDA's kernels otherwise report the decreasing offsets."""
    readable = lengths.device.type == "cpu" or is_validating()
    if not readable or type(lengths) is not torch.Tensor or torch.compiler.is_compiling():
        return  # fake and other subclass tensors hold no data to check
    bad = (lengths < 0).nonzero()
    if bad.numel():
        where = ", ".join(str(int(i)) for i in bad[0])
        raise ValueError(f"gpuprim.segment_reduce: lengths must be non-negative, got lengths[{where}] = "
                         f"{lengths[tuple(bad[0].tolist())].item()}")


@reports_input_errors
def segment_reduce(
    src: Tensor,
    offsets_or_reduce: Union[Tensor, str, None] = None,
    reduce: Optional[str] = None,
    dim: int = 0,
    *,
    offsets: Optional[Tensor] = None,
    lengths: Optional[Tensor] = None,
    axis: Optional[int] = None,
    unsafe: bool = False,
    initial: Optional[float] = None,
) -> Tensor:
    """Reduces the segments ``src[offsets[s]:offsets[s+1]]`` (along ``dim``) into one row each.

    Args:
        src: floating tensor (fp16, bf16, fp32, fp64) with at least one dim; any strides.
        offsets: 1-D int32 or int64 tensor of ``num_segments + 1`` CSR offsets on src's device:
            ``offsets[0] == 0``, non-decreasing, ``offsets[-1] == src.size(dim)``.
        reduce: ``"sum"``, ``"mean"``, ``"max"``, ``"min"`` or ``"prod"``.
        dim: the dim whose positions are segmented (negative counts from the end).

    torch.segment_reduce's form works too: ``segment_reduce(data, reduce, lengths=..., offsets=...,
    axis=..., unsafe=..., initial=...)``. ``lengths`` (1-D, the segment sizes) is an alternative to
    ``offsets`` (turned into offsets on the device, no sync); ``axis`` is ``dim``; with ``unsafe=True``,
    as torch, rows past the last offset belong to no segment (instead of an error). ``initial`` joins
    every segment as torch's does: sum adds it, prod multiplies by it, max/min compare with it, mean
    gives (sum + initial) / count, and an empty segment gives ``initial``.

    Batched (torch's N-D form): offsets ``[*batch, S + 1]`` (or lengths ``[*batch, S]``) with src
    ``[*batch, N, ...]`` and ``axis == offsets.dim() - 1`` reduce every batch row's segments of its own N
    rows: the result is ``[*batch, S, ...]``. One call of the 1-D engine on the flattened batch (offsets
    shifted by ``b * N`` on the device: no sync); gradients flow through it.

    Returns:
        A contiguous tensor of src's dtype and shape, except ``size(dim) == num_segments``.
        Empty segments give 0 for sum/mean/max/min (max/min too: a fixed fill, as torch_scatter; torch
        gives nan for mean, -inf/inf for max/min) and 1 for prod (torch's empty product), or ``initial``.
        max/min propagate NaN like :func:`torch.amax`. fp16/bf16 accumulate in fp32.

    Offsets are not checked against the data (that would need a device sync) unless validate mode is on
    (:func:`gpuprim.set_validate`); then bad offsets raise a ValueError. Otherwise offsets are clamped into
    ``[0, src.size(dim)]`` and a decreasing pair gives an empty segment: memory-safe, though the result of
    overlapping segments is unspecified on CUDA.

    Determinism: always bitwise reproducible run to run, whatever the flag (gpu_to_gpu in CUB's terms: the
    summation order depends only on the shape, the dtype and whether src's data is 16-byte aligned, never on
    timing or the GPU's SM count; no float atomics). Long segments are split into fixed-size chunks whose
    partials are combined in chunk order. CPU and CUDA sums/means may differ in the last bits (different
    order); max/min agree exactly (up to the sign of a zero).

    Differentiable in ``src``. prod's gradient is torch's: grad * out / src in a segment without zeros,
    the product of the other values at a segment's only zero, 0 elsewhere. For max/min the whole
    gradient of each output element goes to the first row (lowest index) of its segment holding the
    extreme value in that column (ties: lowest index wins; a NaN result sends it to the first NaN).
    The backward is the registered op ``gpuprim::segment_reduce_backward``.
    """
    if isinstance(offsets_or_reduce, str):  # torch.segment_reduce(data, reduce, ...)
        if reduce is not None:
            raise TypeError("gpuprim.segment_reduce: reduce given twice")
        reduce = offsets_or_reduce
    elif offsets_or_reduce is not None:
        if offsets is not None:
            raise TypeError("gpuprim.segment_reduce: offsets given twice")
        offsets = offsets_or_reduce
    reduce = "sum" if reduce is None else reduce
    dim = dim if axis is None else axis
    if lengths is not None:
        if offsets is not None:
            raise TypeError("gpuprim.segment_reduce: give offsets or lengths, not both")
        if lengths.dim() == 0:
            raise ValueError("gpuprim.segment_reduce: lengths must be at least 1-D, got a 0-D tensor")
        _check_lengths(lengths)
        offsets = torch.cat([lengths.new_zeros(lengths.shape[:-1] + (1,)), torch.cumsum(lengths, -1)], -1)
    if offsets is None:
        raise TypeError("gpuprim.segment_reduce: offsets (or lengths) is required")
    if offsets.dim() > 1:
        dim = _check_batched(src, offsets, dim)
    if is_validating():
        _validate_offsets(src, offsets, reduce, dim)
    if initial is not None and reduce in ("sum", "mean"):  # from an fp32 (fp64) sum: one rounding, as torch
        wide = torch.float64 if src.dtype == torch.float64 else torch.float32
        total = _segment_op(src.to(wide), offsets, "sum", dim, unsafe) + initial
        counts = _counts(offsets, total.dim(), dim)
        return (total / counts.clamp_min(1) if reduce == "mean" else total).to(src.dtype)
    out = _segment_op(src, offsets, reduce, dim, unsafe)
    if reduce == "prod" or initial is not None:
        out = _with_initial(out, offsets, reduce, dim, initial)
    return out


def _check_batched(src: Tensor, offsets: Tensor, dim: int) -> int:
    """torch's rules for N-D offsets: axis is their last dim, and src's leading dims are their batch dims."""
    nb = offsets.dim() - 1
    if src.dim() <= nb:
        raise ValueError(f"gpuprim.segment_reduce: src must have more than {nb} dims with {offsets.dim()}-D "
                         f"offsets, got {src.dim()}")
    wrapped = dim + src.dim() if dim < 0 else dim
    if wrapped != nb:
        raise ValueError(f"gpuprim.segment_reduce: dim (axis) must be offsets.dim() - 1 = {nb} with "
                         f"{offsets.dim()}-D (batched) offsets / lengths, got {dim}")
    if tuple(src.shape[:nb]) != tuple(offsets.shape[:nb]):
        raise ValueError(f"gpuprim.segment_reduce: offsets / lengths must have src's leading dims "
                         f"{tuple(src.shape[:nb])}, got {tuple(offsets.shape[:nb])}")
    if offsets.size(-1) == 0:
        raise ValueError("gpuprim.segment_reduce: offsets must have num_segments + 1 >= 1 entries per row, got 0")
    return wrapped


def _segment_op(src: Tensor, offsets: Tensor, reduce: str, dim: int, unsafe: bool) -> Tensor:
    if offsets.dim() > 1:
        return _batched_op(src, offsets, reduce, unsafe)
    if unsafe:  # torch's unchecked form: rows past the last offset belong to no segment (one extra, dropped)
        padded = torch.cat([offsets, offsets.new_full((1,), src.size(dim))])
        return torch.ops.gpuprim.segment_reduce.default(src, padded, reduce, dim).narrow(dim, 0, offsets.numel() - 1)
    return torch.ops.gpuprim.segment_reduce.default(src, offsets, reduce, dim)


def _batched_op(src: Tensor, offsets: Tensor, reduce: str, unsafe: bool) -> Tensor:
    """N-D offsets [*batch, S + 1]: the batch flattened into one CSR over src's [B * N, ...] rows (row b's
    offsets shifted by b * N, on the device), one call of the engine, then [*batch, S, ...]."""
    nb = offsets.dim() - 1
    batch, n, segments = tuple(offsets.shape[:nb]), src.size(nb), offsets.size(-1) - 1
    rows = 1
    for b in batch:
        rows *= b
    flat_src = src.reshape((rows * n,) + tuple(src.shape[nb + 1:]))
    shift = torch.arange(rows, device=offsets.device, dtype=torch.int64).unsqueeze(1) * n
    starts = offsets.reshape(rows, segments + 1).to(torch.int64) + shift
    # Safe form: row b's last offset is N, so its last segment ends where row b + 1 starts. unsafe: one extra
    # segment per row holds the rows past its last offset, dropped afterwards (as the 1-D form).
    per_row = segments + 1 if unsafe else segments
    flat = torch.cat([starts[:, :per_row].reshape(-1), starts.new_full((1,), rows * n)])
    out = torch.ops.gpuprim.segment_reduce.default(flat_src, flat, reduce, 0)
    out = out.reshape(batch + (per_row,) + tuple(src.shape[nb + 1:]))
    return out.narrow(nb, 0, segments).contiguous() if unsafe else out


def _counts(offsets: Tensor, ndim: int, dim: int) -> Tensor:
    """Segment sizes, shaped to broadcast against the output along ``dim``."""
    sizes = offsets[..., 1:] - offsets[..., :-1]
    return sizes.reshape(tuple(sizes.shape) + (1,) * (ndim - dim % ndim - 1))


def _with_initial(out: Tensor, offsets: Tensor, reduce: str, dim: int, initial: Optional[float]) -> Tensor:
    """Folds ``initial`` into every segment as torch.segment_reduce does; empty segments get ``initial``
    (prod without it: 1). Tensor ops only: no sync, differentiable."""
    counts = _counts(offsets, out.dim(), dim)
    fill = 1.0 if initial is None else initial
    if initial is not None:
        if reduce == "prod":
            out = out * initial
        elif reduce == "max":
            out = torch.clamp_min(out, initial)
        elif reduce == "min":
            out = torch.clamp_max(out, initial)
    return torch.where(counts <= 0, torch.full_like(out, fill), out)


def _validate_offsets(src: Tensor, offsets: Tensor, reduce: str, dim: int) -> None:
    if offsets.dim() > 1 and not offsets.is_floating_point() and offsets.size(-1) > 0:
        for row in offsets.reshape(-1, offsets.size(-1)):  # each batch row: CSR offsets of src.size(axis) rows
            _validate_offsets(src, row, reduce, dim)
        return
    if offsets.dim() != 1 or offsets.numel() == 0 or offsets.is_floating_point() or src.dim() == 0:
        return  # the op's own checks report shape and dtype errors
    if not -src.dim() <= dim < src.dim():
        return
    rows = src.size(dim)
    first, last = int(offsets[0]), int(offsets[-1])
    if first != 0:
        raise ValueError(f"gpuprim.segment_reduce: offsets[0] must be 0, got {first}")
    if last != rows:
        raise ValueError(f"gpuprim.segment_reduce: offsets[-1] must be src.size({dim}) = {rows}, got {last}")
    if offsets.numel() > 1:
        steps = offsets[1:] - offsets[:-1]
        if bool((steps < 0).any()):
            bad = int(torch.nonzero(steps < 0)[0])
            raise ValueError(f"gpuprim.segment_reduce: offsets must be non-decreasing, got offsets[{bad}] = "
                             f"{int(offsets[bad])} > offsets[{bad + 1}] = {int(offsets[bad + 1])}")
