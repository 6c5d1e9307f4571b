"""gpuprim.segment_reduce vs PyTorch: torch.segment_reduce, index_add_, and a dense reshape/sum where one exists.

python3 benchmarks/bench_segment_reduce.py --out DIR [--cub-bin PATH] [--quick]

Bytes per call = src read + output written + offsets read. The issue's targets: sum over [16M rows, 128] fp32
with (a) uniform 64-row segments (256K segments) and (b) one giant segment, both >= 70% of the same run's copy
bandwidth. Inputs are small integers (in float dtypes too), so every partial sum is exact in any order and
gpuprim must match the anchors bit for bit before it is timed (prod's products of -1/0/1 too). prod's target:
within 1.2x of sum's time on the same case.
CUB has no anchor for this layout (DeviceSegmentedReduce reduces 1-D segments of contiguous items, not rows of
a [N, D] tensor); the D=1 case is where one would fit (see the report).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import torch

import gpuprim
import timing

OP = "segment_reduce"
ROWS = 1 << 24  # 16M rows x 128 fp32 = 8 GiB, 140x the H200's L2


def _small_integer_input(rows: int, d: int, dtype: torch.dtype) -> torch.Tensor:
    values = torch.randint(-1, 2, (rows, d) if d > 1 else (rows,), dtype=torch.int8, device=timing.DEVICE)
    return values.to(dtype)


def _offsets(rows: int, segment_rows: int) -> torch.Tensor:
    offsets = torch.arange(0, rows + 1, segment_rows, dtype=torch.int64, device=timing.DEVICE)
    if int(offsets[-1]) != rows:
        offsets = torch.cat([offsets, torch.tensor([rows], device=timing.DEVICE)])
    return offsets


def _anchors(src: torch.Tensor, offsets: torch.Tensor, segment_rows: int, reduce: str) -> Dict[str, Callable]:
    rows, segments = src.shape[0], offsets.numel() - 1
    anchors: Dict[str, Callable] = {}
    if segments == 1:
        dense = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin, "prod": torch.prod}[reduce]
        anchors["torch_dense"] = lambda: dense(src, 0, keepdim=True)
        anchors["torch_segment_reduce"] = lambda: torch.segment_reduce(src, reduce, offsets=offsets, axis=0,
                                                                       unsafe=True, initial=float(reduce == "prod"))
        return anchors
    if rows % segment_rows == 0:
        dense = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin, "prod": torch.prod}[reduce]
        anchors["torch_dense"] = lambda: dense(src.view(segments, segment_rows, *src.shape[1:]), 1)
    anchors["torch_segment_reduce"] = lambda: torch.segment_reduce(src, reduce, offsets=offsets, axis=0,
                                                                   unsafe=True, initial=float(reduce == "prod"))
    if reduce == "sum":
        segment_ids = torch.repeat_interleave(torch.arange(segments, device=src.device), offsets.diff())
        out = torch.zeros((segments,) + tuple(src.shape[1:]), dtype=src.dtype, device=src.device)
        anchors["torch_index_add"] = lambda: out.zero_().index_add_(0, segment_ids, src)
    return anchors


def _measure(case: str, rows: int, d: int, segment_rows: int, dtype: torch.dtype, reduce: str) -> List[timing.Row]:
    src = _small_integer_input(rows, d, dtype)
    offsets = _offsets(rows, segment_rows)
    result = gpuprim.segment_reduce(src, offsets, reduce)
    anchors = _anchors(src, offsets, segment_rows, reduce)
    reference = anchors["torch_dense"]()  # every case has one: segment_rows divides rows, or one segment
    if reduce == "mean":  # a division: the same value up to its rounding (torch divides in a different order)
        torch.testing.assert_close(result.float(), reference.float(), rtol=1e-2, atol=1e-3)
    else:
        timing.assert_equal(result, reference.to(result.dtype), f"gpuprim.segment_reduce {case}")
    del reference
    bytes_moved = (src.numel() * src.element_size() + result.numel() * result.element_size()
                   + offsets.numel() * offsets.element_size())
    del result
    common = dict(bytes_moved=bytes_moved, shape=tuple(src.shape), dtype=dtype, numel=src.numel(),
                  segments=offsets.numel() - 1, reduce=reduce)
    rows_out = [timing.record(OP, case, "gpuprim", timing.bench(lambda: gpuprim.segment_reduce(src, offsets, reduce)),
                              **common)]
    for name, fn in anchors.items():
        # torch.segment_reduce folds one segment per output element in one thread: seconds for a giant segment.
        reps = dict(warmup=1, reps=3) if name == "torch_segment_reduce" and common["segments"] == 1 else {}
        try:
            rows_out.append(timing.record(OP, case, name, timing.bench(fn, **reps), **common))
        except Exception as error:  # noqa: BLE001 - an anchor that cannot run this case must not hide gpuprim's row
            rows_out.append(timing.error_record(OP, case, name, error))
    return rows_out


def cases(quick: bool) -> List[dict]:
    rows = ROWS // timing.size_divisor(quick)
    return [
        dict(case="sum_uniform64_d128_f32", rows=rows, d=128, segment_rows=64, dtype=torch.float32, reduce="sum"),
        dict(case="sum_giant_d128_f32", rows=rows, d=128, segment_rows=rows, dtype=torch.float32, reduce="sum"),
        dict(case="max_uniform64_d128_f32", rows=rows, d=128, segment_rows=64, dtype=torch.float32, reduce="max"),
        dict(case="max_giant_d128_f32", rows=rows, d=128, segment_rows=rows, dtype=torch.float32, reduce="max"),
        dict(case="prod_uniform64_d128_f32", rows=rows, d=128, segment_rows=64, dtype=torch.float32, reduce="prod"),
        dict(case="prod_giant_d128_f32", rows=rows, d=128, segment_rows=rows, dtype=torch.float32, reduce="prod"),
        dict(case="mean_uniform1024_d128_bf16", rows=rows, d=128, segment_rows=1024, dtype=torch.bfloat16,
             reduce="mean"),
        dict(case="sum_uniform1024_d1_f32", rows=rows * 16, d=1, segment_rows=1024, dtype=torch.float32,
             reduce="sum"),
        dict(case="sum_uniform4_d64_f32", rows=rows, d=64, segment_rows=4, dtype=torch.float32, reduce="sum"),
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
