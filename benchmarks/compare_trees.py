"""Times two builds of gpuprim side by side: each op's benchmark runs with the "before" tree, then the "after"
tree, in one process each, on the same GPU in the same call, and the gpuprim rows of both are compared.

python3 benchmarks/compare_trees.py --before DIR --after DIR --out OUT [--only op,op] [--cub-bin PATH] [--rounds N]

DIR is a checkout (or a copy holding benchmarks/ and torch_ops/ with lib/libgpuprim.so built). Each tree runs
its own benchmarks/bench_<op>.py with its own library (PYTHONPATH), so rows are matched by (case, impl); a
row that only one tree has is listed without a ratio. Writes OUT/before/, OUT/after/ (JSON) and
OUT/compare.md: per gpuprim row the two medians and after / before - 1 (a row slower by more than --tolerance
is marked). Exit status 0 when every op ran in both trees.

--rounds N (N > 1) runs each op N times per tree, the order alternating (before first in even rounds, after
first in odd ones), so that whatever favours the first or the second process of a pair (a cold GPU, a warm
allocator) falls on both trees; OUT/<tree>_r<i>/ per round, and compare.md gives the medians over the rounds and
each round's change.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Dict, Tuple


def run(tree: Path, op: str, out: Path, cub_bin: str, timeout: int) -> bool:
    script = tree / "benchmarks" / f"bench_{op}.py"
    if not script.exists():
        print(f"--- {op}: no {script}", file=sys.stderr)
        return False
    env = dict(os.environ, PYTHONPATH=str(tree / "torch_ops"), PYTHONUNBUFFERED="1")
    command = [sys.executable, str(script), "--out", str(out)] + (["--cub-bin", cub_bin] if cub_bin else [])
    print(f"=== {op} ({tree.name}): {' '.join(command)}", file=sys.stderr, flush=True)
    try:
        return subprocess.run(command, env=env, cwd=tree, timeout=timeout).returncode == 0
    except subprocess.TimeoutExpired:
        print(f"--- {op} ({tree.name}): timed out after {timeout} s", file=sys.stderr)
        return False


def rows(path: Path) -> Dict[Tuple[str, str], dict]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {(row["case"], row["impl"]): row for row in data.get("rows", []) if "median_ms" in row}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--cub-bin", default="")
    parser.add_argument("--timeout", type=int, default=150, help="seconds per op and tree")
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("--rounds", type=int, default=1, help="runs per tree, alternating which goes first")
    args = parser.parse_args()
    ops = [op for op in args.only.split(",") if op] or sorted(
        p.stem[len("bench_"):] for p in (args.after / "benchmarks").glob("bench_*.py"))
    rounds = max(1, args.rounds)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    ok = True
    lines = ["| op | case | impl | before ms | after ms | change |" + (" change per round |" if rounds > 1 else ""),
             "|---|---|---|---:|---:|---:|" + ("---|" if rounds > 1 else "")]
    for op in ops:
        per_round = []  # (before rows, after rows) of each round
        for index in range(rounds):
            order = ("before", "after") if index % 2 == 0 else ("after", "before")
            outs = {name: args.out / (name if rounds == 1 else f"{name}_r{index}") for name in trees}
            for name in order:
                ok &= run(trees[name], op, outs[name], args.cub_bin, args.timeout)
            per_round.append(tuple(rows(outs[name] / f"{op}.json") for name in ("before", "after")))
        keys = sorted({key for pair in per_round for side in pair for key in side})
        for key in keys:
            if not key[1].startswith("gpuprim"):
                continue
            b_all = [pair[0][key]["median_ms"] for pair in per_round if key in pair[0]]
            a_all = [pair[1][key]["median_ms"] for pair in per_round if key in pair[1]]
            b = statistics.median(b_all) if b_all else None
            a = statistics.median(a_all) if a_all else None
            change = ""
            if a is not None and b is not None:
                delta = a / b - 1
                change = f"{delta:+.1%}" + (" **slower**" if delta > args.tolerance else "")
            line = f"| {op} | {key[0]} | {key[1]} | {_ms(b)} | {_ms(a)} | {change} |"
            if rounds > 1:
                paired = [f"{pair[1][key]['median_ms'] / pair[0][key]['median_ms'] - 1:+.1%}"
                          for pair in per_round if key in pair[0] and key in pair[1]]
                line += f" {', '.join(paired)} |"
            lines.append(line)
        (args.out / "compare.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok else 1


def _ms(value) -> str:
    return "-" if value is None else f"{value:.4f}"


if __name__ == "__main__":
    sys.exit(main())
