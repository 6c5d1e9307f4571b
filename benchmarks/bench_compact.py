"""gpuprim.compact vs torch.masked_select vs CUB DeviceSelect::If and DeviceSelect::Flagged.

python3 benchmarks/bench_compact.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = the minimum any compaction of x by a bool mask must move: x read (4 B/elem for
fp32), mask read (1 B/elem), kept elements written. gpuprim.compact by default also fills the tail of
its fixed-capacity output with zeros (4 B per dropped element, not counted: it is part of its default
contract); impl "gpuprim_no_fill" is compact(..., fill_value=None), which leaves the tail unwritten as
CUB does. gpuprim never syncs; torch.masked_select syncs to size its output. Two CUB anchors in the
fp32 keep50 case:
select_flagged_f32_half (impl "cub_flagged") does compact's work minus the zero tail: fp32 values
with a bool flag array, about half set, 4n + n + 4*kept bytes; select_if_f32_half (impl "cub")
selects with a predicate on the values, so it reads no mask: 4n + 4*kept bytes, a lower bound.
Every case first checks that gpuprim's kept prefix equals torch.masked_select bitwise.
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "compact"
N = 1 << 28  # 256M fp32: 1 GiB, 17x the H200's L2


def _measure(case: str, n: int, dtype: torch.dtype, keep: float, cub_bin: Optional[str],
             cub_case: Optional[str]) -> List[timing.Row]:
    x = torch.randn(n, device=timing.DEVICE, dtype=torch.float32).to(dtype)
    mask = torch.rand(n, device=timing.DEVICE) < keep
    out, count = gpuprim.compact(x, mask)
    expected = torch.masked_select(x, mask)
    k = expected.numel()
    if int(count) != k:
        raise AssertionError(f"gpuprim.compact {case}: count {int(count)} != {k}")
    timing.assert_equal(out[:k], expected, f"gpuprim.compact {case} kept elements")
    del out, count, expected
    common = dict(bytes_moved=n * (x.element_size() + 1) + k * x.element_size(), shape=(n,), dtype=dtype, numel=n,
                  keep=keep)
    no_fill, no_fill_count = gpuprim.compact(x, mask, fill_value=None)
    if int(no_fill_count) != k or not torch.equal(no_fill[:k], torch.masked_select(x, mask)):
        raise AssertionError(f"gpuprim.compact(fill_value=None) {case}: kept elements differ")
    del no_fill, no_fill_count
    rows = [
        timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.compact(x, mask)), **common),
        timing.record(OP, case, "gpuprim_no_fill", timing.bench(lambda: gpuprim.compact(x, mask, fill_value=None)),
                      **common),
        timing.record(OP, case, "torch", timing.bench(lambda: torch.masked_select(x, mask)), **common),
    ]
    del x, mask
    if cub_case:
        rows += timing.cub_anchor(cub_bin, cub_case, n, op=OP, case=case, shape=(n,), dtype=torch.float32)
        rows += timing.cub_anchor(cub_bin, "select_flagged_f32_half", n, op=OP, case=case, shape=(n,),
                                  dtype=torch.float32, impl="cub_flagged")
    return rows


def cases(quick: bool) -> List[dict]:
    n = N // timing.size_divisor(quick)
    return [
        dict(case=f"fp32_{timing.human_count(n)}_keep50", n=n, dtype=torch.float32, keep=0.5,
             cub_case="select_if_f32_half"),
        dict(case=f"fp32_{timing.human_count(n)}_keep5", n=n, dtype=torch.float32, keep=0.05, cub_case=None),
        dict(case=f"bf16_{timing.human_count(n)}_keep50", n=n, dtype=torch.bfloat16, keep=0.5, cub_case=None),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), lambda **spec: _measure(cub_bin=cub_bin, **spec), out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
