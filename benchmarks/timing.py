"""Shared timing and reporting for gpuprim's benchmarks (see benchmarks/README.md).

Every bench_<op>.py times its cases with bench(), turns each timing into a result row with
record(), adds the anchor ratios with add_ratios() and writes <out>/<op>.json and <op>.png with
write_results(). Rows of one case share "op" and "case"; "impl" says who ran it (gpuprim...,
torch, cub). Without a GPU, bench() falls back to wall-clock timing so the scripts can be
smoke-tested anywhere; those numbers mean nothing.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
MIN_FLUSH_BYTES = 256 << 20  # H200 L2 is 60 MB; flush with >= 4x the L2 size
COPY_BYTES = 2 << 30
QUICK_DIVISOR = 16  # --quick shrinks every input 16x (a smoke test, not a measurement)
OURS_PREFIX = "gpuprim"  # impl names starting with this are gpuprim; every other impl is an anchor
Row = Dict[str, object]


# ---------------------------------------------------------------- progress and sizes
def progress(index: int, total: int, name: str) -> None:
    print(f"[{index}/{total}] {name} ...", file=sys.stderr, flush=True)


def size_divisor(quick: bool) -> int:
    # GPUPRIM_BENCH_SHRINK shrinks further, only to smoke-test the scripts on a CPU.
    return (QUICK_DIVISOR if quick else 1) * int(os.environ.get("GPUPRIM_BENCH_SHRINK", "1"))


def human_count(n: int) -> str:
    for shift, suffix in ((30, "G"), (20, "M"), (10, "K")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def free_memory() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- timing
_flush_buffer: Optional[torch.Tensor] = None


def _l2_flush_buffer() -> torch.Tensor:
    global _flush_buffer
    if _flush_buffer is None:
        properties = torch.cuda.get_device_properties(torch.cuda.current_device())
        l2_bytes = getattr(properties, "L2_cache_size", 0) or 0
        _flush_buffer = torch.empty(max(MIN_FLUSH_BYTES, 4 * l2_bytes), dtype=torch.uint8, device="cuda")
    return _flush_buffer


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    position = q * (len(sorted_values) - 1)
    low, high = math.floor(position), math.ceil(position)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def _summarize(times_ms: List[float]) -> Dict[str, float]:
    times_ms = sorted(times_ms)
    return {
        "median_ms": _quantile(times_ms, 0.5),
        "min_ms": times_ms[0],
        "p20": _quantile(times_ms, 0.2),
        "p80": _quantile(times_ms, 0.8),
        "reps": len(times_ms),
    }


def bench(fn: Callable[[], object], *, warmup: int = 3, reps: int = 25, flush_l2: bool = True) -> Dict[str, float]:
    """Times fn() reps times, each between a pair of CUDA events on the current stream.

    L2 is flushed (a >= 256 MiB write) before every call so each call reads its input from DRAM,
    as it would inside a model. Host work inside fn (launches, syncs such as torch.bincount's)
    counts when it keeps the GPU waiting, which is what a user pays too.
    """
    if DEVICE != "cuda":
        return _bench_wall_clock(fn, warmup=warmup, reps=reps)
    for _ in range(warmup):
        fn()
    flush = _l2_flush_buffer() if flush_l2 else None
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda.synchronize()
    for start, end in zip(starts, ends):
        if flush is not None:
            flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return _summarize([start.elapsed_time(end) for start, end in zip(starts, ends)])


def wall_time(fn, calls: int = 200, warmup: int = 20, batch: int = 20) -> dict:
    """Per-call time of fn() called back to back, host work included: CUDA events around each batch of `batch`
    calls, divided by the batch (an event pair around every call would add its own host time to each call). The
    launches' host time counts whenever the GPU waits for it (the other rows flush L2 before each call, which
    hides it). The summary is over the batches."""
    if DEVICE != "cuda":
        return bench(fn, warmup=warmup, reps=calls, flush_l2=False)
    for _ in range(warmup):
        fn()
    batches = max(1, calls // batch)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(batches)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(batches)]
    torch.cuda.synchronize()
    for start, end in zip(starts, ends):
        start.record()
        for _ in range(batch):
            fn()
        end.record()
    torch.cuda.synchronize()
    return _summarize([start.elapsed_time(end) / batch for start, end in zip(starts, ends)])


def _bench_wall_clock(fn: Callable[[], object], *, warmup: int, reps: int) -> Dict[str, float]:
    import time

    for _ in range(warmup):
        fn()
    times_ms = []
    for _ in range(reps):
        begin = time.perf_counter()
        fn()
        times_ms.append((time.perf_counter() - begin) * 1e3)
    return _summarize(times_ms)


_copy_gbps: Optional[float] = None


def copy_bandwidth_gbps() -> float:
    """This run's device-to-device copy bandwidth in GB/s (bytes read + written), measured once.

    The yardstick for every row's pct_copy: a memory-bound op cannot beat a copy of its bytes.
    """
    global _copy_gbps
    if _copy_gbps is None:
        nbytes = COPY_BYTES if DEVICE == "cuda" else COPY_BYTES // 64
        source = torch.empty(nbytes, dtype=torch.uint8, device=DEVICE)
        destination = torch.empty_like(source)
        timing = bench(lambda: destination.copy_(source))
        _copy_gbps = 2 * nbytes / (timing["median_ms"] * 1e-3) / 1e9
        del source, destination
        free_memory()
    return _copy_gbps


# ---------------------------------------------------------------- result rows
def record(op: str, case: str, impl: str, timing: Dict[str, float], *, bytes_moved: float,
           shape: Sequence[int], dtype: object, **extra: object) -> Row:
    """One result row. bytes_moved = the bytes this impl must read + write at minimum."""
    gbps = bytes_moved / (timing["median_ms"] * 1e-3) / 1e9
    return {
        "op": op, "case": case, "shape": list(shape), "dtype": str(dtype).replace("torch.", ""),
        "impl": impl, "median_ms": timing["median_ms"], "min_ms": timing["min_ms"],
        "p20_ms": timing["p20"], "p80_ms": timing["p80"], "reps": timing["reps"],
        "bytes": bytes_moved, "gbps": gbps, "pct_copy": 100.0 * gbps / copy_bandwidth_gbps(), **extra,
    }


def error_record(op: str, case: str, impl: str, error: BaseException) -> Row:
    return {"op": op, "case": case, "impl": impl, "error": f"{type(error).__name__}: {error}"}


def run_case(op: str, case: str, measure: Callable[[], List[Row]]) -> List[Row]:
    """Runs one case's measure(); a failure becomes an error row so the other cases still run."""
    try:
        return measure()
    except Exception as error:  # noqa: BLE001 - any failure of one case is reported, not fatal
        traceback.print_exc()
        return [error_record(op, case, OURS_PREFIX, error)]
    finally:
        free_memory()


def assert_equal(actual: torch.Tensor, expected: torch.Tensor, what: str) -> None:
    """Bitwise check before timing: a benchmark of a wrong result is worthless."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise AssertionError(f"{what}: got {actual.dtype}{list(actual.shape)}, "
                             f"expected {expected.dtype}{list(expected.shape)}")
    if not torch.equal(actual, expected):
        mismatch = (actual != expected).flatten()
        first = int(mismatch.nonzero()[0])
        raise AssertionError(f"{what}: {int(mismatch.sum())} of {mismatch.numel()} elements differ, first at flat "
                             f"index {first}: {actual.flatten()[first].item()} != {expected.flatten()[first].item()}")


def ratio_key(anchor_impl: str) -> str:
    # Both are anchor_ms / gpuprim_ms (> 1: gpuprim faster). "ratio" for CUB because the goals
    # state a fraction of CUB to reach; "speedup" for what a PyTorch user would otherwise call.
    return f"ratio_vs_{anchor_impl}" if anchor_impl.startswith("cub") else f"speedup_vs_{anchor_impl}"


def add_ratios(rows: List[Row]) -> List[Row]:
    """Adds anchor_ms / gpuprim_ms to each gpuprim row, for every anchor timed in the same case."""
    for row in rows:
        if not str(row["impl"]).startswith(OURS_PREFIX) or "median_ms" not in row:
            continue
        for anchor in rows:
            if (anchor["case"] == row["case"] and "median_ms" in anchor
                    and not str(anchor["impl"]).startswith(OURS_PREFIX)):
                row[ratio_key(str(anchor["impl"]))] = anchor["median_ms"] / row["median_ms"]
    return rows


def ratio_items(row: Row) -> List[tuple]:
    return [(key, value) for key, value in row.items() if key.startswith(("speedup_vs_", "ratio_vs_"))]


# ---------------------------------------------------------------- the CUB anchor harness
def cub_anchor(cub_bin: Optional[str], cub_case: str, n: int, *, op: str, case: str,
               shape: Sequence[int], dtype: object, impl: str = "cub", **extra: object) -> List[Row]:
    """Runs `cub_anchors <cub_case> <n>`: its row, an error row if it failed, [] without a harness.

    impl names the row; a case timed against two CUB primitives gives the second another name
    ("cub_..."), so that each gets its own ratio_vs_<impl> and plot bar."""
    if not cub_bin or DEVICE != "cuda":
        return []
    free_memory()  # hand the caching allocator's memory back so the harness can allocate
    try:
        completed = subprocess.run([cub_bin, cub_case, str(n)], capture_output=True, text=True, timeout=300)
        if completed.returncode != 0:
            raise RuntimeError(f"exit {completed.returncode}: {completed.stderr.strip()[-500:]}")
        result = json.loads(completed.stdout.strip().splitlines()[-1])
    except Exception as error:  # noqa: BLE001 - a missing anchor must not hide gpuprim's numbers
        print(f"cub anchor {cub_case} n={n} failed: {error}", file=sys.stderr, flush=True)
        return [error_record(op, case, impl, error)]
    timing = {"median_ms": result["median_ms"], "min_ms": result["min_ms"],
              "p20": None, "p80": None, "reps": result.get("reps", 25)}
    return [record(op, case, impl, timing, bytes_moved=result["bytes"], shape=shape, dtype=dtype,
                   cub_case=cub_case, **extra)]


# ---------------------------------------------------------------- output
def collect_meta() -> Dict[str, object]:
    meta: Dict[str, object] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__, "cuda": torch.version.cuda, "device": DEVICE,
        "host": platform.node(), "copy_gbps": copy_bandwidth_gbps(),
    }
    if DEVICE == "cuda":
        properties = torch.cuda.get_device_properties(torch.cuda.current_device())
        meta["gpu"] = properties.name
        meta["l2_bytes"] = getattr(properties, "L2_cache_size", None)
    else:
        meta["gpu"] = "none (CPU wall-clock smoke test; numbers are meaningless)"
    try:
        import gpuprim

        meta["gpuprim"] = getattr(gpuprim, "__version__", None)
    except Exception:  # noqa: BLE001 - meta is best effort
        pass
    try:
        completed = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                   cwd=Path(__file__).parent, timeout=10)
        meta["git_commit"] = completed.stdout.strip() if completed.returncode == 0 else None
        # A copied working tree (the device tool) may carry an older .git: say when files differ from it.
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                text=True, cwd=Path(__file__).parent, timeout=10)
        if meta["git_commit"] and status.returncode == 0 and status.stdout.strip():
            meta["git_commit"] += " + uncommitted changes"
    except Exception:  # noqa: BLE001
        meta["git_commit"] = None
    return meta


def write_results(op: str, rows: List[Row], out_dir: str, meta: Dict[str, object], *, complete: bool = True) -> None:
    """Writes <out_dir>/<op>.json, and once the op is complete, <out_dir>/<op>.png."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{op}.json", "w") as f:
        json.dump({"op": op, "complete": complete, "meta": meta, "rows": rows}, f, indent=1)
    if complete:
        print(f"wrote {out / f'{op}.json'}", file=sys.stderr)
        _plot(op, rows, out / f"{op}.png", meta)


def _plot(op: str, rows: List[Row], path: Path, meta: Dict[str, object]) -> None:
    """Left: GB/s vs elements for the size sweeps (rows with a "series"), one line per impl.
    Right: GB/s of every case, one bar per impl. Dashed: this run's copy bandwidth."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib missing: no plot for {op}", file=sys.stderr)
        return
    timed = [row for row in rows if "gbps" in row]
    if not timed:
        return
    impls = list(dict.fromkeys(row["impl"] for row in timed))
    cases = list(dict.fromkeys(row["case"] for row in timed))
    sweeps = [row for row in timed if row.get("series")]
    figure, axes = plt.subplots(1, 2 if sweeps else 1, figsize=(14 if sweeps else 8, 4.5), squeeze=False)
    if sweeps:
        axis = axes[0][0]
        for series in dict.fromkeys(row["series"] for row in sweeps):
            for impl in impls:
                points = sorted((row["numel"], row["gbps"]) for row in sweeps
                                if row["series"] == series and row["impl"] == impl)
                if points:
                    axis.plot(*zip(*points), marker="o", label=f"{impl} ({series})")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("elements")
        axis.set_ylabel("GB/s (bytes read + written / median time)")
        axis.axhline(meta["copy_gbps"], linestyle="--", color="gray", label="device copy")
        axis.legend(fontsize=8)
        axis.grid(alpha=0.3)
    axis = axes[0][-1]
    width = 0.8 / len(impls)
    for index, impl in enumerate(impls):
        by_case = {row["case"]: row["gbps"] for row in timed if row["impl"] == impl}
        positions = [c + index * width for c, case in enumerate(cases) if case in by_case]
        axis.bar(positions, [by_case[case] for case in cases if case in by_case], width, label=impl)
    axis.axhline(meta["copy_gbps"], linestyle="--", color="gray", label="device copy")
    axis.set_xticks([c + 0.4 - width / 2 for c in range(len(cases))])
    axis.set_xticklabels(cases, rotation=30, ha="right", fontsize=8)
    axis.set_ylabel("GB/s")
    axis.legend(fontsize=8)
    axis.grid(axis="y", alpha=0.3)
    figure.suptitle(f"gpuprim.{op} on {meta.get('gpu')} (torch {meta.get('torch')})")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    print(f"wrote {path}", file=sys.stderr)


def print_table(rows: List[Row]) -> None:
    header = ["case", "impl", "dtype", "shape", "median ms", "GB/s", "% copy", "ratios"]
    lines = [header]
    for row in rows:
        if "error" in row:
            lines.append([row["case"], row["impl"], "", "", "ERROR", "", "", str(row["error"])[:80]])
            continue
        ratios = " ".join(f"{key.split('_vs_')[1]}={value:.2f}x" for key, value in ratio_items(row))
        lines.append([row["case"], row["impl"], row["dtype"], "x".join(map(str, row["shape"])),
                      f"{row['median_ms']:.4f}", f"{row['gbps']:.0f}", f"{row['pct_copy']:.0f}", ratios])
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip())
    sys.stdout.flush()


def save_partial(op: str, rows: List[Row], out_dir: str) -> None:
    """Saves the cases done so far: if a later case hangs the GPU and the op is killed, they survive."""
    write_results(op, rows, out_dir, collect_meta(), complete=False)


def case_filter(op: str) -> List[str]:
    """GPUPRIM_BENCH_MATCH="op:part,part;op2:part": run only op's cases whose names contain one of the parts."""
    for entry in os.environ.get("GPUPRIM_BENCH_MATCH", "").split(";"):
        name, _, parts = entry.partition(":")
        if name.strip() == op:
            return [part for part in parts.split(",") if part]
    return []


def run_cases(op: str, specs: List[dict], measure: Callable[..., List[Row]], out_dir: str) -> List[Row]:
    """Every bench_<op>.run: measure(**spec) for each case spec (a dict with at least 'case'), with a
    progress line, results saved after each case (a later hang keeps them), then finish()."""
    parts = case_filter(op)
    specs = [spec for spec in specs if not parts or any(part in spec["case"] for part in parts)]
    rows: List[Row] = []
    for index, spec in enumerate(specs, 1):
        progress(index, len(specs), f"{op} {spec['case']}")
        rows += run_case(op, spec["case"], lambda: measure(**spec))
        save_partial(op, rows, out_dir)
    return finish(op, rows, out_dir)


def finish(op: str, rows: List[Row], out_dir: str) -> List[Row]:
    """The common tail of every bench module's run(): ratios, table, JSON + PNG."""
    add_ratios(rows)
    print_table(rows)
    write_results(op, rows, out_dir, collect_meta())
    return rows


def main(run: Callable[[str, Optional[str], bool], List[Row]], description: str) -> None:
    """Command line of a bench_<op>.py run standalone."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", required=True, help="directory for <op>.json and <op>.png")
    parser.add_argument("--cub-bin", default=None, help="path to the cub_anchors binary (CUB rows are skipped without)")
    parser.add_argument("--quick", action="store_true", help=f"inputs {QUICK_DIVISOR}x smaller: a smoke test")
    args = parser.parse_args()
    run(args.out, args.cub_bin, args.quick)
