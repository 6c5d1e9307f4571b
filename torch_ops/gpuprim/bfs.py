"""gpuprim.bfs: direction-optimizing breadth-first search over a CSR graph."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from gpuprim._determinism import is_deterministic
from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating
from gpuprim.spmm import _validate_csr


@reports_input_errors
def bfs(
    crow: Tensor,
    col: Tensor,
    source: Union[int, Sequence[int], Tensor],
    *,
    max_depth: Optional[int] = None,
    direction: str = "auto",
    symmetric: bool = False,
) -> Tuple[Tensor, Tensor]:
    """Breadth-first search from ``source`` (one vertex, or several: a multi-source search) along out-edges.

    Args:
        crow, col: the graph in CSR (int32 or int64 alike): vertex ``u``'s out-neighbours are
            ``col[crow[u]:crow[u+1]]``; ``V = crow.numel() - 1`` vertices.
        source: a vertex id, a sequence of them, or a 1-D int32/int64 tensor (on crow's device).
        max_depth: expand at most this many levels (vertices farther away count as unreached).
        direction: ``"auto"`` (push from a small frontier, pull from a large one, switched on the device by the
            frontier's edge count), ``"top_down"`` (push only) or ``"bottom_up"`` (pull only).
        symmetric: promise that the graph is undirected (each edge stored both ways); the pull direction then
            reads the graph itself instead of its transpose (which the op otherwise builds with a sort).

    Returns:
        ``(distance, parent)``: int32 and int64 ``[V]``, -1 where unreached; a source's parent is itself.
        Parents satisfy the Graph500 rules (each is an in-neighbour one level closer).

    Determinism: distances always. Parents: the smallest-id neighbour one level closer when
    :func:`gpuprim.is_deterministic` (then CPU and CUDA agree), any such neighbour otherwise (CUDA; the CPU
    always takes the smallest).

    Sync: on CUDA the host reads a done flag once the search could have reached depth 16, then after batches
    that double (one sync for most graphs); with ``max_depth <= 16`` it never syncs (CUDA graphs can capture it).
    Bad input raises on the CPU, and on CUDA in validate mode (:func:`gpuprim.set_validate`); otherwise on CUDA
    bad crow/col/source values are skipped and reported at the next gpuprim call (:class:`gpuprim.InputError`).
    """
    if isinstance(source, Tensor):
        sources = source.reshape(-1)
    else:
        ids = [int(source)] if isinstance(source, int) else [int(s) for s in source]
        sources = torch.tensor(ids, dtype=torch.int64, device=crow.device)
    if is_validating():
        _validate_csr("bfs", crow, col, crow.numel() - 1)
        host = sources.long().cpu()
        bad = (host < 0) | (host >= crow.numel() - 1)
        if bool(bad.any()):
            at = int(torch.nonzero(bad)[0])
            raise IndexError(f"gpuprim.bfs: sources[{at}] = {int(host[at])} is out of range for dimension 0 of size "
                             f"{crow.numel() - 1}")
    return torch.ops.gpuprim.bfs.default(crow, col, sources, max_depth=max_depth, direction=direction,
                                         symmetric=symmetric, deterministic=is_deterministic())
