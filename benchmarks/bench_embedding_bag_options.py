"""gpuprim.embedding_bag's scale_grad_by_freq and max_norm vs torch.nn.functional.embedding_bag's.

python3 benchmarks/bench_embedding_bag_options.py --out DIR [--quick]

The 1M x 128 fp32 table of bench_embedding_bag.py, 65536 bags x 20 indices (uniform and Zipf-like). Backward rows:
gpuprim's registered backward op with scale_grad_by_freq off (the default path: must hold bench_embedding_bag's
time) and on (the row's sum times 1 / its count, in the same store: should cost nothing more), and torch's autograd
backward with scale_grad_by_freq=True. Forward rows with max_norm=1: the in-place renorm of the looked-up rows (a
gather, a norm, a scatter back) plus the lookup, vs torch's embedding_renorm_ plus its lookup, and gpuprim without
max_norm (the renorm's cost is the difference). Results are checked against torch before timing.
bytes_moved: backward = the gathered grad rows + the dense gradient written + indices; forward = the gathered
rows + output + indices (+ the renorm's gather and scatter of n rows with max_norm).
"""
from __future__ import annotations

from typing import List, Optional

import torch
import torch.nn.functional as F

import distributions
import gpuprim
import timing

OP = "embedding_bag_options"
NUM_BAGS, BAG = 65536, 20


def _measure(case: str, rows: int, d: int, indices: str, mode: str, n: int) -> List[timing.Row]:
    bags = n // BAG
    g = torch.Generator(device=timing.DEVICE).manual_seed(1)
    weight = torch.randn(rows, d, device=timing.DEVICE, dtype=torch.float32, generator=g)
    idx = distributions.ids(indices, rows, n)
    offsets = torch.arange(0, n, BAG, device=timing.DEVICE, dtype=torch.int64)
    grad = torch.randn(bags, d, device=timing.DEVICE, dtype=torch.float32, generator=g)

    _, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, mode)

    def ours_bwd(by_freq: bool):
        return lambda: torch.ops.gpuprim.embedding_bag_backward(
            grad, weight, idx, offsets, bag_size, max_indices, None, mode, None, False, False, by_freq)[0]

    w = weight.detach().requires_grad_()
    out = F.embedding_bag(idx, w, offsets, mode=mode, scale_grad_by_freq=True)
    torch_bwd = lambda: torch.autograd.grad(out, w, grad, retain_graph=True)[0]  # noqa: E731
    expected = torch_bwd()
    scale = float(expected.abs().max()) + 1
    torch.testing.assert_close(ours_bwd(True)(), expected, rtol=1e-4, atol=1e-4 * scale)
    del expected

    # max_norm: rows of norm ~ sqrt(d) > 1, so every looked-up row is rescaled on the first call; later calls
    # find them at the bound (the steady state of a training loop: the same work, a norm check and a write).
    table = weight / 4
    ours_fwd = lambda: gpuprim.embedding_bag(table, idx, offsets, mode, max_norm=1.0)  # noqa: E731
    torch_fwd = lambda: F.embedding_bag(idx, table, offsets, mode=mode, max_norm=1.0)  # noqa: E731
    plain_fwd = lambda: gpuprim.embedding_bag(table, idx, offsets, mode)  # noqa: E731
    torch.testing.assert_close(ours_fwd(), torch_fwd(), rtol=1e-4, atol=1e-5)

    esize = weight.element_size()
    bwd_bytes = n * d * esize + rows * d * esize + n * 8
    fwd_bytes = n * d * esize + bags * d * esize + n * 8
    common = dict(shape=(rows, d), dtype=torch.float32, numel=n, indices=indices, mode=mode)
    specs = [
        ("backward", "gpuprim", ours_bwd(False), bwd_bytes),
        ("backward_scale_grad_by_freq", "gpuprim", ours_bwd(True), bwd_bytes),
        ("backward_scale_grad_by_freq", "torch", torch_bwd, bwd_bytes),
        ("forward", "gpuprim", plain_fwd, fwd_bytes),
        ("forward_max_norm", "gpuprim", ours_fwd, fwd_bytes + 2 * n * d * esize),
        ("forward_max_norm", "torch", torch_fwd, fwd_bytes + 2 * n * d * esize),
    ]
    out_rows: List[timing.Row] = []
    for kind, impl, fn, nbytes in specs:
        try:
            out_rows.append(timing.record(OP, f"{case}_{kind}", impl, timing.bench(fn), bytes_moved=nbytes, **common))
        except Exception as error:  # noqa: BLE001 - an anchor that fails must not hide gpuprim's rows
            out_rows.append(timing.error_record(OP, f"{case}_{kind}", impl, error))
    return out_rows


def cases(quick: bool) -> List[dict]:
    rows = (1 << 20) // timing.size_divisor(quick)
    n = NUM_BAGS * BAG // timing.size_divisor(quick)
    return [dict(case=f"{mode}_{indices}_1Mx128_f32", rows=rows, d=128, indices=indices, mode=mode, n=n)
            for indices in ("uniform", "zipf") for mode in ("sum", "mean")]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
