"""Runs each tests/test_*.py in its own pytest process (a CUDA fault then costs one file, not
the whole run), a few at a time, and prints one combined summary line:

    gpu-runner tests: N passed, N failed, N skipped, N errors (crashed: ...)

When a file's process dies (segfault, abort), the test it died in is read from the traceback,
recorded as crashed, and the rest of the file runs again without it (up to 3 times), so one
crash does not hide the results of the tests after it.

A --deadline (seconds for the whole run) shortens the last runs so that the summary line is
always printed: an outer `timeout` would kill this script before it.

--sanitize TOOL (memcheck, racecheck, synccheck, initcheck) runs every pytest process under
compute-sanitizer with that tool, its report in LOG_DIR/<file>.<tool>.<pid>.log, and adds the errors it
counted to the summary line:

    gpu-runner sanitizer (memcheck): N errors in N files (N reports)
    gpu-runner sanitizer (initcheck): N errors in N files, N more in PyTorch's own kernels (N reports)

An error whose report names a PyTorch kernel as its first frame (at::native, at::cuda, at_cuda_detail: e.g. a
test's torch reference) is counted apart; every other error, and every error past the reports a process printed,
is counted as gpuprim's and fails the run.

--chunks N spreads each file's tests over N processes (every N-th test id each): a slow file, e.g. under a
sanitizer, then uses N of the --jobs slots.

Files start longest first, by the seconds a process of each took in an earlier GPU run (scripts/
test_durations.json; a file not listed starts first), so the long files do not start last and meet the
deadline. Each run writes LOG_DIR/durations.json in that format (a file's seconds: the sum of its processes'),
from which the record can be refreshed.

The processes take turns with the GPU's memory (GPUPRIM_TEST_GPU_LOCK, tests/gpu_turn.py): a test marked slow or
listed in conftest's LARGE_TESTS runs while no other test does, so that --jobs does not decide whether the
multi-GiB tests fit beside the others.

Usage: python3 scripts/run_tests_isolated.py LOG_DIR [--jobs 4] [--timeout 300] [--deadline S] [--files ...]
       [--sanitize TOOL] [--chunks N] [pytest args...]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DURATIONS = ROOT / "scripts" / "test_durations.json"
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")
CRASH_SITE = re.compile(r'File "[^"]*/tests/(test_\w+\.py)", line \d+ in (test_\w+)')
# compute-sanitizer's last line for a process: "ERROR SUMMARY: 3 errors"; racecheck's may be
# "RACECHECK SUMMARY: N hazards displayed (N errors, N warnings)" instead.
SANITIZER_SUMMARY = re.compile(
    r"ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?")
# The first line of each error or hazard report (continuation lines are indented or empty).
SANITIZER_REPORT = re.compile(r"^========= (?!COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY)\S", re.M)
# A report's first device frame ("=========     at void ns::kernel<...>(...)+0x2a0") in a PyTorch namespace.
SANITIZER_FRAME = re.compile(r"^=========\s+at (.*)$", re.M)
TORCH_KERNEL = re.compile(r"^(void )?(at_cuda_detail::|at::native::|at::cuda::)")
SANITIZER_OPTIONS = {
    # Leaks are PyTorch's caching allocator holding memory by design; API errors are reported (a CUDA call
    # that failed), as they would be a bug in gpuprim's host code too.
    "memcheck": ["--leak-check", "no"],
    "racecheck": ["--racecheck-report", "all"],
    "synccheck": [],
    "initcheck": [],
}
# GPUPRIM_SANITIZER_ARGS: more compute-sanitizer arguments, e.g. a kernel filter that leaves PyTorch's own
# kernels uninstrumented so a test file fits a device call (scripts/gpu_runner.sh documents the choice).
EXTRA_SANITIZER_ARGS = os.environ.get("GPUPRIM_SANITIZER_ARGS", "").split()


def run_pytest(args: list[str], log: Path, timeout: int, sanitize: str | None = None) -> tuple[str, str]:
    prefix = []
    if sanitize:  # one report per process (%p): a test that spawns a CUDA process gets its own
        prefix = ["compute-sanitizer", "--tool", sanitize, *SANITIZER_OPTIONS[sanitize], *EXTRA_SANITIZER_ARGS,
                  "--print-limit", "50",
                  "--log-file", str(log.with_name(f"{log.stem}.{sanitize}.%p.log"))]
    try:
        command = [*prefix, sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:logging", *args]
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        output, status = proc.stdout + proc.stderr, ("ok" if proc.returncode in (0, 1, 5) else f"rc={proc.returncode}")
    except subprocess.TimeoutExpired as e:
        raw = e.stdout or b""
        output, status = (raw.decode(errors="replace") if isinstance(raw, bytes) else raw), "timeout"
    log.write_text(output)
    return output, status


OUTCOME = re.compile(r"^(\S+::\S+) (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)", re.M)


def outcomes_of(output: str) -> dict:
    """test id -> outcome, from pytest's verbose lines (present even when the process died)."""
    return {test: outcome.lower() for test, outcome in OUTCOME.findall(output)}


def torch_reports(text: str) -> int:
    """How many of a process's printed reports have a PyTorch kernel as their first frame."""
    starts = [m.start() for m in SANITIZER_REPORT.finditer(text)] + [len(text)]
    count = 0
    for begin, end in zip(starts, starts[1:]):
        frame = SANITIZER_FRAME.search(text, begin, end)
        count += bool(frame and TORCH_KERNEL.match(frame.group(1)))
    return count


def sanitizer_errors(log_dir: Path, stem: str, tool: str) -> tuple[int, int, int]:
    """(gpuprim's errors, errors in PyTorch's kernels, reports) over every process report of one test file's
    runs."""
    errors = in_torch = reports = 0
    name = re.compile(rf"{re.escape(stem)}(\.rerun\d+)?\.{tool}\.\d+\.log")
    for report in log_dir.iterdir():
        if not name.fullmatch(report.name):
            continue
        text = report.read_text(errors="replace")
        summaries = SANITIZER_SUMMARY.findall(text)
        counted = [int(total) for total, _ in summaries if total] or [int(r) for _, r in summaries if r]
        # A process cut by the timeout prints no summary: count the reports it did print.
        total = max(counted) if counted else len(SANITIZER_REPORT.findall(text))
        torch_count = min(total, torch_reports(text))
        errors += total - torch_count
        in_torch += torch_count
        reports += 1
    return errors, in_torch, reports


def collect(test_file: Path, extra: list[str], timeout: int) -> list[str]:
    """The file's test ids (pytest --collect-only, PYTEST_ADDOPTS' selection applied)."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(test_file), *extra]
    try:
        output = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return []
    return [line.strip() for line in output.splitlines() if "::" in line and not line.startswith(" ")]


def run_file(test_file: Path, log_dir: Path, timeout: int, extra: list[str], deadline: float,
             sanitize: str | None = None, chunk: tuple[int, int, list[str]] | None = None):
    """One test file, or with chunk = (i, n, ids) the file's test ids i, i + n, i + 2n, ... (a slow file spread
    over n jobs)."""
    start = time.time()
    name, stem, targets = test_file.name, test_file.stem, [str(test_file)]
    if chunk is not None:
        part, parts, ids = chunk
        name, stem = f"{test_file.name}[{part + 1}/{parts}]", f"{test_file.stem}.part{part + 1}"
        targets = ids[part::parts]
        if not targets:
            return name, stem, {}, time.time() - start, ["empty"], []
    excluded: list[str] = []
    outcomes: dict = {}
    statuses = []
    for attempt in range(4):
        remaining = int(deadline - time.time())
        if remaining < 10:
            statuses.append("no-time")
            break
        args = [*targets, *extra] + (["-k", " and ".join(f"not {test}" for test in excluded)] if excluded else [])
        output, status = run_pytest(args, log_dir / f"{stem}{'' if attempt == 0 else f'.rerun{attempt}'}.log",
                                    min(timeout, remaining), sanitize)
        outcomes.update(outcomes_of(output))  # a rerun repeats earlier tests: count each test once
        statuses.append(status)
        crash = CRASH_SITE.findall(output.split("Current thread")[-1]) if status.startswith("rc=-") else []
        if not crash or attempt == 3:
            break
        excluded.append(crash[0][1])  # rerun the rest of the file without the test it died in
    totals: dict = {}
    for outcome in outcomes.values():
        kind = {"passed": "passed", "failed": "failed", "skipped": "skipped", "error": "errors"}.get(outcome, outcome)
        totals[kind] = totals.get(kind, 0) + 1
    crashed = [f"{test_file.name}::{test}" for test in excluded]
    if statuses and statuses[-1] != "ok":  # the last run also died, timed out, or had no time left
        crashed.append(f"{name}({statuses[-1]})")
    return name, stem, totals, time.time() - start, statuses, crashed


def resolve_test_file(entry: str) -> Path:
    """A --files entry: a path, or an op's name as the runner's BENCH takes it (cumsum -> tests/test_cumsum.py)."""
    path = Path(entry)
    if path.is_file():
        return path
    stem = path.name[:-3] if path.name.endswith(".py") else path.name
    candidate = ROOT / "tests" / f"{stem if stem.startswith('test_') else 'test_' + stem}.py"
    if candidate.is_file():
        return candidate
    sys.exit(f"run_tests_isolated: no test file {entry!r} (a path, or an op's name such as cumsum)")


def longest_first(files: list[Path]) -> list[Path]:
    """Files by their recorded seconds, descending; files without a record first (they may be long)."""
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    return sorted(files, key=lambda f: -seconds.get(f.name, float("inf")))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--deadline", type=int, default=3600, help="seconds for the whole run")
    parser.add_argument("--files", nargs="*", help="test files or op names (default: tests/test_*.py)")
    parser.add_argument("--sanitize", choices=sorted(SANITIZER_OPTIONS), help="run under compute-sanitizer")
    parser.add_argument("--chunks", type=int, default=1, help="split each file's tests over this many processes")
    args, extra = parser.parse_known_args()
    args.log_dir.mkdir(parents=True, exist_ok=True)
    # The pytest processes take turns with the GPU's memory (tests/gpu_turn.py): a multi-GiB test runs alone.
    os.environ.setdefault("GPUPRIM_TEST_GPU_LOCK", str(args.log_dir.resolve()))
    files = [resolve_test_file(f) for f in args.files] if args.files else sorted((ROOT / "tests").glob("test_*.py"))
    files = longest_first(files)
    seconds_of: dict[str, float] = {}
    totals = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    all_crashed = []
    deadline = time.time() + args.deadline
    sanitizer = {"errors": 0, "files": 0, "in_torch": 0, "reports": 0}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        if args.chunks > 1:  # each file's ids collected once, the collections side by side
            timeout = max(10, min(180, args.deadline // 4))
            ids = list(pool.map(lambda f: collect(f, extra, timeout), files))
            # A file whose collection failed or timed out runs whole: pytest then reports why, never "empty".
            futures = [pool.submit(run_file, f, args.log_dir, args.timeout, extra, deadline, args.sanitize,
                                   (i, args.chunks, file_ids) if file_ids else None)
                       for f, file_ids in zip(files, ids) for i in range(args.chunks if file_ids else 1)]
        else:
            futures = [pool.submit(run_file, f, args.log_dir, args.timeout, extra, deadline, args.sanitize)
                       for f in files]
        for future in concurrent.futures.as_completed(futures):  # a line per file (or chunk) as soon as it ends
            name, stem, counts, seconds, statuses, crashed = future.result()
            file_name = name.split("[")[0]
            seconds_of[file_name] = round(seconds_of.get(file_name, 0.0) + seconds, 1)
            for kind, number in counts.items():
                totals[kind] = totals.get(kind, 0) + number
            all_crashed += crashed
            found = ""
            if args.sanitize and statuses != ["empty"]:
                errors, in_torch, reports = sanitizer_errors(args.log_dir, stem, args.sanitize)
                sanitizer["errors"] += errors
                sanitizer["files"] += errors > 0
                sanitizer["in_torch"] += in_torch
                sanitizer["reports"] += reports
                found = (f"  {args.sanitize}: {errors} errors"
                         + (f" (+{in_torch} in PyTorch's kernels)" if in_torch else "")
                         + ("" if reports else " (no report: did it start?)"))
            print(f"  {name:<28} {','.join(statuses):<16} {seconds:6.1f}s  {counts}{found}"
                  + (f"  crashed in: {' '.join(crashed)}" if crashed else ""), flush=True)
    (args.log_dir / "durations.json").write_text(json.dumps(dict(sorted(seconds_of.items())), indent=1) + "\n")
    summary = ", ".join(f"{totals[k]} {k}" for k in ("passed", "failed", "skipped", "errors"))
    print(f"gpu-runner tests: {summary}" + (f" (crashed: {' '.join(all_crashed)})" if all_crashed else ""))
    if args.sanitize:
        in_torch = f", {sanitizer['in_torch']} more in PyTorch's own kernels" if sanitizer["in_torch"] else ""
        print(f"gpu-runner sanitizer ({args.sanitize}): {sanitizer['errors']} errors in {sanitizer['files']} files"
              f"{in_torch} ({sanitizer['reports']} reports)")
    sys.exit(1 if totals["failed"] or totals["errors"] or all_crashed or sanitizer["errors"] else 0)


if __name__ == "__main__":
    main()
