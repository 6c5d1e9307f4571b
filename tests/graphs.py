"""Graph generators and checks shared by the spmm and bfs tests, benchmarks and examples/gnn_layer.py."""
from __future__ import annotations

from typing import Optional, Tuple

import torch

Csr = Tuple[torch.Tensor, torch.Tensor]


def csr_from_lengths(lengths, num_cols: int, generator: torch.Generator, index_dtype=torch.int64) -> Csr:
    """A CSR structure with the given row lengths and random (unsorted, maybe repeated) columns."""
    lengths = torch.as_tensor(lengths, dtype=torch.int64)
    crow = torch.zeros(lengths.numel() + 1, dtype=torch.int64)
    crow[1:] = lengths.cumsum(0)
    nnz = int(crow[-1])
    col = torch.randint(0, max(num_cols, 1), (nnz,), generator=generator) if num_cols > 0 else torch.zeros(0)
    return crow.to(index_dtype), col.to(torch.int64).to(index_dtype)


def coo_to_csr(rows: torch.Tensor, cols: torch.Tensor, num_rows: int, index_dtype=torch.int64) -> Csr:
    """Sorted by (row, col); duplicates kept."""
    order = torch.argsort(rows * max(int(cols.max()) + 1 if cols.numel() else 1, 1) + cols, stable=True)
    rows, cols = rows[order], cols[order]
    crow = torch.zeros(num_rows + 1, dtype=torch.int64, device=rows.device)
    crow[1:] = torch.bincount(rows, minlength=num_rows).cumsum(0)
    return crow.to(index_dtype), cols.to(index_dtype)


def kronecker_edges(scale: int, edge_factor: int, generator: torch.Generator, device="cpu",
                    abc: Tuple[float, float, float] = (0.57, 0.19, 0.19)) -> Tuple[torch.Tensor, torch.Tensor]:
    """Graph500's Kronecker generator (initiator A, B, C = 0.57, 0.19, 0.19; D the rest), vertex ids permuted.
    In-place bit updates, so that scale 26 (2^30 edges) fits beside the CSR build on one GPU."""
    n, m = 1 << scale, edge_factor << scale
    a, b, c = abc
    ab, c_norm, a_norm = a + b, c / (1 - (a + b)), a / (a + b)
    src = torch.zeros(m, dtype=torch.int64, device=device)
    dst = torch.zeros(m, dtype=torch.int64, device=device)
    for bit in range(scale):  # draws on the generator's device (a CUDA generator for the benchmark sizes)
        r1 = torch.rand(m, generator=generator, device=generator.device).to(device)
        r2 = torch.rand(m, generator=generator, device=generator.device).to(device)
        src_bit = r1 > ab
        del r1
        # float32 thresholds, as c_norm * bit + a_norm * (1 - bit) gives them
        dst_bit = r2 > torch.where(src_bit, torch.tensor(c_norm, dtype=r2.dtype, device=device),
                                   torch.tensor(a_norm, dtype=r2.dtype, device=device))
        del r2
        src.add_(src_bit.to(torch.int64), alpha=1 << bit)
        dst.add_(dst_bit.to(torch.int64), alpha=1 << bit)
        del src_bit, dst_bit
    perm = torch.randperm(n, generator=generator, device=generator.device).to(device)
    return perm[src], perm[dst]


def _sort_int64(keys: torch.Tensor, piece: int = 1 << 28) -> torch.Tensor:
    """torch.sort(keys).values of non-negative keys, in value-range pieces of about `piece` keys when there are
    more: torch.sort's indices and buffers for 2^31 keys do not fit an 80 GB card beside the keys."""
    if keys.numel() <= piece:
        return torch.sort(keys).values
    pieces = -(-keys.numel() // piece)
    top = int(keys.max()) + 1
    cuts = [top * i // pieces for i in range(pieces + 1)]
    out = torch.empty_like(keys)
    at = 0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        part = keys[(keys >= lo) & (keys < hi)]
        out[at:at + part.numel()] = torch.sort(part).values
        at += part.numel()
        del part
    return out


def kronecker_graph(scale: int, edge_factor: int, seed: int = 1, device="cpu", index_dtype=torch.int64) -> Csr:
    """An undirected Kronecker graph in CSR (each edge stored both ways, self loops dropped, duplicates kept),
    columns sorted within each row. Built from sorted row * n + col keys: no argsort indices, no COO copies."""
    n = 1 << scale
    g = torch.Generator(device=device).manual_seed(seed)
    src, dst = kronecker_edges(scale, edge_factor, g, device)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    del keep
    m = src.numel()
    keys = torch.empty(2 * m, dtype=torch.int64, device=device)
    torch.mul(src, n, out=keys[:m]).add_(dst)
    torch.mul(dst, n, out=keys[m:]).add_(src)
    del src, dst
    keys = _sort_int64(keys)
    crow = torch.searchsorted(keys, torch.arange(n + 1, device=device, dtype=torch.int64) * n)
    col = keys.remainder_(n)
    return crow.to(index_dtype), col.to(index_dtype)


def power_law_lengths(rows: int, mean: float, generator: torch.Generator, alpha: float = 2.1) -> torch.Tensor:
    """Row lengths with a Pareto tail (a few very long rows), mean about `mean`."""
    u = torch.rand(rows, generator=generator, dtype=torch.float64)
    x = (1 - u) ** (-1 / (alpha - 1))  # Pareto(alpha - 1) >= 1
    return (x * mean * (alpha - 2) / (alpha - 1)).clamp(max=rows).long()


def bfs_reference(crow: torch.Tensor, col: torch.Tensor, sources, max_depth: Optional[int] = None,
                  piece: int = 1 << 29):
    """Level-synchronous BFS in pure PyTorch on crow's device (frontier as a tensor, index_select + scatter):
    (distance int32, parent int64 = the smallest neighbour one level closer), -1 where unreached. A level's
    frontier is expanded in pieces of about `piece` out-edges, so that a scale-26 graph's levels fit on a card."""
    device = crow.device
    crow, col = crow.long(), col.long()
    n = crow.numel() - 1
    dist = torch.full((n,), -1, dtype=torch.int32, device=device)
    parent = torch.full((n,), -1, dtype=torch.int64, device=device)
    frontier = torch.unique(torch.as_tensor(sources, dtype=torch.int64).reshape(-1).to(device))
    dist[frontier] = 0
    parent[frontier] = frontier
    deg = crow[1:] - crow[:-1]
    level = 0
    while frontier.numel() and (max_depth is None or level < max_depth):
        counts = deg.index_select(0, frontier)
        ends = counts.cumsum(0)
        total = int(ends[-1])
        cuts, sizes = [0, frontier.numel()], [total]  # one piece: the plain level-synchronous step
        if total > piece:
            marks = torch.searchsorted(ends, torch.arange(piece, total, piece, device=device)).tolist()
            cuts = sorted({0, *marks}) + [frontier.numel()]
            at_ends = ends[torch.tensor(cuts[1:], device=device) - 1].tolist()
            sizes = [e - s for s, e in zip([0] + at_ends[:-1], at_ends)]
        best = torch.full((n,), n, dtype=torch.int64, device=device)
        found = []
        for a, b, size in zip(cuts[:-1], cuts[1:], sizes):
            f, c = frontier[a:b], counts[a:b]
            src = torch.repeat_interleave(f, c, output_size=size)
            first = crow.index_select(0, f) - (ends[a:b] - c - (ends[a - 1] if a else 0))  # piece-relative starts
            starts = torch.repeat_interleave(first, c, output_size=size)
            dst = col.index_select(0, starts + torch.arange(size, device=device))
            del first, starts
            new = dist.index_select(0, dst) == -1
            src, dst = src[new], dst[new]
            best.scatter_reduce_(0, dst, src, "amin")
            found.append(torch.unique(dst))
            del src, dst, new
        frontier = torch.unique(torch.cat(found)) if len(found) > 1 else found[0]
        dist[frontier] = level + 1
        parent[frontier] = best.index_select(0, frontier)
        level += 1
    return dist, parent


def _has_edges(crow: torch.Tensor, col: torch.Tensor, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    """Whether each edge src -> dst is in the CSR graph: a binary search in each source's row (no copy of the edge
    list, which a scale-26 graph cannot afford; rows whose columns are unsorted are sorted first)."""
    n = crow.numel() - 1
    if col.numel() == 0:
        return torch.zeros_like(dst, dtype=torch.bool)
    row_starts = torch.zeros(col.numel(), dtype=torch.bool, device=col.device)
    row_starts[crow[:-1][crow[:-1] < col.numel()]] = True
    if col.numel() > 1 and not bool(((col[1:] >= col[:-1]) | row_starts[1:]).all()):
        rows = torch.repeat_interleave(torch.arange(n, device=col.device), crow[1:] - crow[:-1])
        col = torch.sort(rows * n + col).values.remainder_(n)  # rows stay where crow says
    del row_starts
    last = col.numel() - 1
    lo, hi = crow[src], crow[src + 1]  # the first column >= dst in [lo, hi)
    while bool((lo < hi).any()):
        mid = (lo + hi) // 2
        active = lo < hi
        below = col[mid.clamp(max=last)] < dst
        lo = torch.where(active & below, mid + 1, lo)
        hi = torch.where(active & ~below, mid, hi)
    return (lo < crow[src + 1]) & (col[lo.clamp(max=last)] == dst)


def validate_bfs(crow: torch.Tensor, col: torch.Tensor, sources, dist: torch.Tensor, parent: torch.Tensor,
                 expected_dist: torch.Tensor) -> None:
    """Graph500's rules for a BFS tree, plus distances equal to the reference's (on crow's device):
    sources are their own parents at distance 0; every other reached vertex's parent is reached, one level
    closer and has an edge to it; unreached vertices have parent -1; the tree spans exactly the reached ones."""
    device = crow.device
    crow, col = crow.long(), col.long()
    dist, parent = dist.to(device), parent.to(device)
    n = crow.numel() - 1
    assert dist.dtype == torch.int32 and parent.dtype == torch.int64 and dist.shape == parent.shape == (n,)
    assert torch.equal(dist, expected_dist.to(device)), "distances differ from the reference"
    sources = torch.as_tensor(sources, dtype=torch.int64).reshape(-1).to(device)
    assert bool((dist[sources] == 0).all()) and torch.equal(parent[sources], sources), "sources"
    reached = dist >= 0
    assert bool((parent[~reached] == -1).all()), "an unreached vertex has a parent"
    assert bool((parent[reached] >= 0).all()), "a reached vertex has no parent"
    others = torch.nonzero(reached & (dist > 0)).flatten()
    p = parent[others]
    assert bool((dist[p] == dist[others] - 1).all()), "a parent is not one level closer"
    assert bool(_has_edges(crow, col, p, others).all()), "a parent has no edge to its child"
