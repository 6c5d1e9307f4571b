"""Runs each tests/test_*.py in its own pytest process (a CUDA fault then costs one file, not
the whole run), a few at a time, and prints one combined summary line:

    gpu-runner tests: N passed, N failed, N skipped, N errors (crashed files: ...)

Usage: python3 scripts/run_tests_isolated.py LOG_DIR [--jobs 4] [--timeout 300] [pytest args...]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def run_file(test_file: Path, log_dir: Path, timeout: int, extra: list[str]) -> tuple[str, dict, float, str]:
    log = log_dir / f"{test_file.stem}.log"
    start = time.time()
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:logging",
                               str(test_file), *extra], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        output, status = proc.stdout + proc.stderr, ("ok" if proc.returncode in (0, 5) else f"rc={proc.returncode}")
    except subprocess.TimeoutExpired as e:
        output, status = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    log.write_text(output)
    tail = output.strip().splitlines()[-1] if output.strip() else ""
    counts: dict = {}
    for number, kind in COUNT.findall(tail):
        kind = "errors" if kind.startswith("error") else kind
        counts[kind] = counts.get(kind, 0) + int(number)
    return test_file.name, counts, time.time() - start, status


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--files", nargs="*", help="test files (default: tests/test_*.py)")
    args, extra = parser.parse_known_args()
    args.log_dir.mkdir(parents=True, exist_ok=True)
    files = [Path(f) for f in args.files] if args.files else sorted((ROOT / "tests").glob("test_*.py"))
    totals = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    crashed = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, counts, seconds, status in pool.map(lambda f: run_file(f, args.log_dir, args.timeout, extra), files):
            for kind, number in counts.items():
                totals[kind] = totals.get(kind, 0) + number
            if status != "ok" and not counts.get("failed"):
                crashed.append(f"{name}({status})")
            print(f"  {name:<32} {status:<8} {seconds:6.1f}s  {counts}", flush=True)
    summary = ", ".join(f"{totals[k]} {k}" for k in ("passed", "failed", "skipped", "errors"))
    print(f"gpu-runner tests: {summary}" + (f" (crashed files: {' '.join(crashed)})" if crashed else ""))
    sys.exit(1 if totals["failed"] or totals["errors"] or crashed else 0)


if __name__ == "__main__":
    main()
