"""gpuprim.segment_reduce: sum/mean/max/min over CSR segments of rows, deterministic and sync-free."""
from __future__ import annotations

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating


@reports_input_errors
def segment_reduce(src: Tensor, offsets: Tensor, reduce: str = "sum", dim: int = 0) -> Tensor:
    """Reduces the segments ``src[offsets[s]:offsets[s+1]]`` (along ``dim``) into one row each.

    Args:
        src: floating tensor (fp16, bf16, fp32, fp64) with at least one dim; any strides.
        offsets: 1-D int32 or int64 tensor of ``num_segments + 1`` CSR offsets on src's device:
            ``offsets[0] == 0``, non-decreasing, ``offsets[-1] == src.size(dim)``.
        reduce: ``"sum"``, ``"mean"``, ``"max"`` or ``"min"``.
        dim: the dim whose positions are segmented (negative counts from the end).

    Returns:
        A contiguous tensor of src's dtype and shape, except ``size(dim) == num_segments``.
        Empty segments give 0 for every reduction (max/min too: a fixed fill, as torch_scatter).
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

    Differentiable in ``src``. For max/min the whole gradient of each output element goes to the first row
    (lowest index) of its segment holding the extreme value in that column (ties: lowest index wins; a NaN
    result sends it to the first NaN). The backward is the registered op ``gpuprim::segment_reduce_backward``.
    """
    if is_validating():
        _validate_offsets(src, offsets, reduce, dim)
    return torch.ops.gpuprim.segment_reduce.default(src, offsets, reduce, dim)


def _validate_offsets(src: Tensor, offsets: Tensor, reduce: str, dim: int) -> None:
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
