"""Runs every benchmarks/bench_<op>.py and writes DIR/<op>.json, DIR/<op>.png and DIR/summary.md.

python3 benchmarks/run_all.py --out DIR [--cub-bin PATH] [--quick] [--only cumsum,bincount]

Each op runs in its own Python process, so one op's crash (even a sticky CUDA error) or leaked
memory cannot touch the others; its failure is printed and recorded in the summary.
Exit status: 0 if every op and every case ran, 1 otherwise (the summary is written either way).
"""
from __future__ import annotations

import argparse
import collections
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

BENCH_DIR = Path(__file__).resolve().parent
TAIL_LINES = 25  # stderr lines kept from a failed op for the summary


class Terminated(Exception):
    """SIGTERM (e.g. from `timeout`): stop running ops but still write the summary."""


terminated = False


def _on_sigterm(signum, frame):
    global terminated
    terminated = True
    raise Terminated()


def discover_ops() -> List[str]:
    return sorted(path.stem[len("bench_"):] for path in BENCH_DIR.glob("bench_*.py"))


def run_op(op: str, args: argparse.Namespace) -> Optional[str]:
    """Runs bench_<op>.py in a subprocess, echoing its stderr live; returns an error text or None."""
    command = [sys.executable, str(BENCH_DIR / f"bench_{op}.py"), "--out", args.out]
    if args.cub_bin:
        command += ["--cub-bin", args.cub_bin]
    if args.quick:
        command.append("--quick")
    print(f"=== {op}: {' '.join(command)}", file=sys.stderr, flush=True)
    tail: collections.deque = collections.deque(maxlen=TAIL_LINES)
    started = time.monotonic()
    try:
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=BENCH_DIR.parent)
    except OSError as error:
        return f"could not start: {error}"
    watchdog = threading.Timer(args.timeout, process.kill)  # a hung op must not hang the whole run
    watchdog.start()
    try:
        for line in process.stderr:
            sys.stderr.write(line)
            sys.stderr.flush()
            tail.append(line.rstrip())
        returncode = process.wait()
    except Terminated:
        return "run_all.py was terminated (SIGTERM) during this op:\n" + "\n".join(tail)
    finally:
        watchdog.cancel()
        if process.poll() is None:  # we are being terminated: take the op down with us
            process.kill()
    elapsed = time.monotonic() - started
    print(f"=== {op}: exit {returncode} after {elapsed:.0f} s", file=sys.stderr, flush=True)
    if returncode != 0:
        reason = f"killed after the {args.timeout:.0f} s timeout" if elapsed >= args.timeout else f"exit {returncode}"
        return f"{reason}:\n" + "\n".join(tail)
    return None


def _ms(row: dict) -> str:
    return f"{row['median_ms']:.4f}" if "median_ms" in row else "FAILED"


def summary_lines(ops: List[str], results: Dict[str, dict], errors: Dict[str, str], out: Path) -> List[str]:
    lines = ["# gpuprim benchmark summary", ""]
    meta = next((result["meta"] for result in results.values()), None)
    if meta:
        lines += [f"GPU: {meta.get('gpu')}, torch {meta.get('torch')} (CUDA {meta.get('cuda')}), "
                  f"device copy {meta.get('copy_gbps', 0):.0f} GB/s (read + write), {meta.get('date')}"
                  + (f", commit {meta['git_commit'][:10]}{meta['git_commit'][40:]}" if meta.get("git_commit") else "")
                  + ".", ""]
    lines += [
        "Times are medians of 25 calls with L2 flushed between calls. Ratios = anchor ms / gpuprim ms "
        "(> 1: gpuprim faster). GB/s and % copy are gpuprim's; bytes = minimum read + write "
        "(see benchmarks/README.md).",
        "",
        "| op | case | gpuprim ms | anchors ms | ratios | GB/s | % copy |",
        "|---|---|---:|---|---|---:|---:|",
    ]
    for op in ops:
        rows = results[op]["rows"] if op in results else []
        for case in dict.fromkeys(row["case"] for row in rows):
            case_rows = [row for row in rows if row["case"] == case]
            anchors = ", ".join(f"{row['impl']} {_ms(row)}" for row in case_rows
                                if not str(row["impl"]).startswith("gpuprim"))
            for row in case_rows:
                if not str(row["impl"]).startswith("gpuprim"):
                    continue
                if "error" in row:
                    lines.append(f"| {op} | {case} | FAILED | {anchors} | {_escape(row['error'])} | | |")
                    continue
                ratios = ", ".join(f"vs {key.split('_vs_')[1]} {value:.2f}x" for key, value in row.items()
                                   if key.startswith(("speedup_vs_", "ratio_vs_")))
                label = case if row["impl"] == "gpuprim" else f"{case} ({row['impl']})"
                lines.append(f"| {op} | {label} | {row['median_ms']:.4f} | {anchors} | {ratios} | "
                             f"{row['gbps']:.0f} | {row['pct_copy']:.0f} |")
        if op in errors:  # the rows above, if any, are the cases it finished before failing
            lines.append(f"| {op} | (whole op) | FAILED | | {_escape(error_headline(errors[op]))} | | |")
    if errors:
        lines += ["", "## Failures", ""]
        for op, error in errors.items():
            lines += [f"### {op}", "", "```", error, "```", ""]
    plots = [op for op in results if (out / f"{op}.png").exists()]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{op}]({op}.png)" for op in plots]
    return lines


def error_headline(error: str) -> str:
    """The failure's first line plus the last progress line, which names the case it died in."""
    lines = error.splitlines()
    last_case = next((line for line in reversed(lines) if line.startswith("[")), "")
    return f"{lines[0]} {last_case}".strip()


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")[:200]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for the JSON, PNG and summary.md files")
    parser.add_argument("--cub-bin", default=None, help="path to the cub_anchors binary (CUB rows skipped without)")
    parser.add_argument("--quick", action="store_true", help="inputs 16x smaller: a smoke test")
    parser.add_argument("--only", default=None, help="comma-separated ops, e.g. cumsum,bincount (default: all)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed per op (default 1800)")
    args = parser.parse_args()

    available = discover_ops()
    ops = available if not args.only else [op.strip() for op in args.only.split(",") if op.strip()]
    unknown = [op for op in ops if op not in available]
    if unknown:
        parser.error(f"unknown op(s) {unknown}; available: {available}")
    if args.cub_bin and not Path(args.cub_bin).is_file():
        print(f"warning: --cub-bin {args.cub_bin} does not exist; CUB rows will be errors", file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    results: Dict[str, dict] = {}
    errors: Dict[str, str] = {}
    signal.signal(signal.SIGTERM, _on_sigterm)
    for op in ops:
        result_path = out / f"{op}.json"
        result_path.unlink(missing_ok=True)  # never summarize a stale file from an earlier run
        if terminated:
            errors[op] = "not run: run_all.py was terminated (SIGTERM) before this op"
            continue
        error = run_op(op, args)
        if error is None and not result_path.exists():
            error = f"finished without writing {result_path}"
        if error is not None:
            errors[op] = error
        if result_path.exists():
            with open(result_path) as f:
                results[op] = json.load(f)

    summary_path = out / "summary.md"
    summary_path.write_text("\n".join(summary_lines(ops, results, errors, out)) + "\n")
    print(f"wrote {summary_path}", file=sys.stderr)
    failed_cases = [f"{row['op']}/{row['case']}/{row['impl']}" for result in results.values()
                    for row in result["rows"] if "error" in row]
    if errors or failed_cases:
        print(f"FAILED ops: {sorted(errors)}; failed cases: {failed_cases}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
