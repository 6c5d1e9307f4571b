"""gpuprim.masked_select: torch.masked_select's exact-size result (syncs), with a data-dependent fake kernel."""
from __future__ import annotations

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors


@torch.library.register_fake("gpuprim::masked_select")
def _masked_select_fake(x: Tensor, mask: Tensor) -> Tensor:
    # The size is the number of set flags: an unbacked symbol for torch.compile (like torch.nonzero's).
    torch._check(not x.is_complex(),
                 lambda: f"gpuprim.masked_select: x must be a floating-point, integer or bool tensor, got {x.dtype}")
    torch._check(mask.dtype == torch.bool,
                 lambda: f"gpuprim.masked_select: mask must be a bool tensor, got {mask.dtype}")
    torch._check(_broadcastable(x.shape, mask.shape),
                 lambda: f"gpuprim.masked_select: mask must be broadcastable with x's shape {list(x.shape)}, "
                         f"got {list(mask.shape)}")
    kept = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty((kept,))


def _broadcastable(a: torch.Size, b: torch.Size) -> bool:
    return all(p == q or p == 1 or q == 1 for p, q in zip(reversed(a), reversed(b)))


@reports_input_errors
def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """``torch.masked_select(x, mask)`` for a bool ``mask`` broadcastable with ``x`` (as torch's).

    ``x`` and ``mask`` are broadcast to their common shape (torch.broadcast_tensors), as
    torch.masked_select does. Returns the kept elements of that broadcast ``x`` (bit copies,
    row-major order) in a 1-D tensor of exactly that many elements. SYNCS with the host to size the
    result (as torch.masked_select does): use :func:`gpuprim.compact` to stay asynchronous or
    CUDA-graph capturable. Under torch.compile the size is a data-dependent symbol (the fake kernel),
    so graphs trace through it (``fullgraph=True``). Differentiable in floating ``x`` (the gradient
    goes back to the kept positions, summed over the dims ``x`` was broadcast along). CUDA: compact's
    one-pass kernel into a scratch buffer, the count read on the host, the kept prefix copied out.
    """
    return torch.ops.gpuprim.masked_select.default(x, mask)
