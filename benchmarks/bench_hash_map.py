"""gpuprim.HashMap insert and find vs a same-run random-gather ceiling and torch.searchsorted.

python3 benchmarks/bench_hash_map.py --out DIR [--quick]

n distinct int32 keys (random) with int32 values in a table of capacity n / load_factor, load factors 0.5,
0.8 and 0.9, n = 128M. Cases:
  insert_*: gpuprim (an empty table's reset - keys filled with the free marker, state zeroed - plus the insert
    of all n pairs: what a build costs) vs gather_ceiling;
  find_*: gpuprim (n queries, all present) vs gather_ceiling and torch_searchsorted (over the sorted keys, then
    a gather of the values: the sort-based lookup a user would write).
gather_ceiling: values8[idx] for n random positions idx (int32) into an int64 tensor of `capacity` entries, i.e.
a gather of the same number of 8-byte slots at random positions: the DRAM-bound floor of a probe. Bytes per
call (every impl) = 16 n: 4 key or query + 4 value read or written + one 8-byte slot. Published anchor:
cuCollections static_map on H100, insert 87.5 GB/s, find 134.6 GB/s (its own byte count).
"""
from __future__ import annotations

import math
from typing import List, Optional

import torch

import gpuprim
import timing

OP = "hash_map"
N = 1 << 27  # 128M keys


def _distinct_keys(n: int) -> torch.Tensor:
    g = torch.Generator(device=timing.DEVICE).manual_seed(0)
    # A random permutation of [0, 2n) scaled into int32's range, first n: distinct, random.
    return (torch.randperm(2 * n, device=timing.DEVICE, generator=g)[:n] * 7 - 2**30).to(torch.int32)


def _measure(case: str, kind: str, n: int, load_factor: float) -> List[timing.Row]:
    keys = _distinct_keys(n)
    values = torch.arange(n, device=timing.DEVICE, dtype=torch.int32)
    capacity = math.ceil(n / load_factor)
    table = gpuprim.HashMap.build(keys, values, capacity=capacity)
    g = torch.Generator(device=timing.DEVICE).manual_seed(1)
    order = torch.randperm(n, device=timing.DEVICE, generator=g)
    queries = keys[order]
    timing.assert_equal(table.find(queries, -1), values[order], f"gpuprim.HashMap {case} find")
    if int(table.size()) != n:
        raise AssertionError(f"gpuprim.HashMap {case}: size {int(table.size())} != {n}")
    slots8 = torch.zeros(capacity, dtype=torch.int64, device=timing.DEVICE)
    positions = torch.randint(0, capacity, (n,), device=timing.DEVICE, generator=g, dtype=torch.int32)
    common = dict(bytes_moved=16 * n, shape=(n,), dtype=torch.int32, numel=n, load_factor=load_factor,
                  capacity=capacity)
    rows = [timing.record(OP, case, "gather_ceiling", timing.bench(lambda: slots8[positions]), **common)]
    if kind == "insert":
        free = torch.iinfo(torch.int32).min

        def build() -> None:
            table.keys.fill_(free)
            table.state.zero_()
            table.insert(keys, values)

        rows.append(timing.record(OP, case, "gpuprim", timing.bench(build), **common))
    else:
        rows.append(timing.record(OP, case, "gpuprim", timing.bench(lambda: table.find(queries, -1)), **common))
        sorted_keys, sort_order = torch.sort(keys)
        sorted_values = values[sort_order]

        def searchsorted() -> torch.Tensor:
            return sorted_values[torch.searchsorted(sorted_keys, queries).clamp_(max=n - 1)]

        timing.assert_equal(searchsorted(), values[order], f"torch.searchsorted {case}")
        rows.append(timing.record(OP, case, "torch_searchsorted", timing.bench(searchsorted), **common))
    return rows


def cases(quick: bool) -> List[dict]:
    n = N // timing.size_divisor(quick)
    return [
        dict(case=f"{kind}_int32_{timing.human_count(n)}_lf{load_factor}", kind=kind, n=n, load_factor=load_factor)
        for kind in ("insert", "find")
        for load_factor in (0.5, 0.8, 0.9)
    ]


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    del cub_bin  # CUB has no hash table; the gather ceiling and torch.searchsorted are the anchors
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
