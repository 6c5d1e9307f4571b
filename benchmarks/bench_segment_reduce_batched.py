"""gpuprim.segment_reduce in torch's batched form (offsets [B, S + 1] for data [B, N, D], axis=1) vs
torch.segment_reduce's same call, and vs gpuprim's 1-D form on the flattened batch (the floor: the batched form
is that call plus a shift of the offsets on the device).

python3 benchmarks/bench_segment_reduce_batched.py --out DIR [--quick]

Bytes per call = src read + output written + offsets read. Inputs are small integers (in fp32), so sums are
exact in any order and gpuprim must match torch bit for bit before it is timed.
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "segment_reduce_batched"


def _measure(case: str, batch: int, n: int, d: int, segments: int, reduce: str) -> List[timing.Row]:
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    src = torch.randint(-1, 2, (batch, n, d), device=timing.DEVICE, generator=g).float()
    cuts = torch.sort(torch.randint(0, n + 1, (batch, segments - 1), device=timing.DEVICE, generator=g), 1).values
    offsets = torch.cat([torch.zeros(batch, 1, dtype=torch.int64, device=timing.DEVICE), cuts,
                         torch.full((batch, 1), n, dtype=torch.int64, device=timing.DEVICE)], 1)
    flat_offsets = torch.cat([(offsets[:, :-1] + torch.arange(batch, device=timing.DEVICE).unsqueeze(1) * n)
                              .reshape(-1), torch.tensor([batch * n], device=timing.DEVICE)])
    ours = lambda: gpuprim.segment_reduce(src, reduce, offsets=offsets, axis=1, initial=0.0)  # noqa: E731
    theirs = lambda: torch.segment_reduce(src, reduce, offsets=offsets, axis=1, initial=0.0)  # noqa: E731
    flat = lambda: gpuprim.segment_reduce(src.view(batch * n, d), flat_offsets, reduce)  # noqa: E731
    timing.assert_equal(ours(), theirs(), f"segment_reduce batched {case}")
    nbytes = src.numel() * 4 + batch * segments * d * 4 + offsets.numel() * 8
    common = dict(shape=(batch, n, d), dtype=torch.float32, segments=segments, reduce=reduce)
    rows: List[timing.Row] = []
    for impl, fn in (("gpuprim", ours), ("torch_segment_reduce", theirs), ("gpuprim_flat_1d", flat)):
        try:
            rows.append(timing.record(OP, case, impl, timing.bench(fn), bytes_moved=nbytes, **common))
        except Exception as error:  # noqa: BLE001 - an anchor that fails must not hide gpuprim's rows
            rows.append(timing.error_record(OP, case, impl, error))
    return rows


def cases(quick: bool) -> List[dict]:
    div = timing.size_divisor(quick)
    return [dict(case=f"{reduce}_b64_n65536_d64_s512", batch=64, n=65536 // div, d=64, segments=512, reduce=reduce)
            for reduce in ("sum", "max")] + [
        dict(case="sum_b4096_n256_d128_s16", batch=4096 // div, n=256, d=128, segments=16, reduce="sum")]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
