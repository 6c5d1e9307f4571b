"""Times two builds of gpuprim side by side: each op's benchmark runs with the "before" tree, then the "after"
tree, in one process each, on the same GPU in the same call, and the gpuprim rows of both are compared.

python3 benchmarks/compare_trees.py --before DIR --after DIR --out OUT [--only op,op] [--cub-bin PATH]

DIR is a checkout (or a copy holding benchmarks/ and torch_ops/ with lib/libgpuprim.so built). Each tree runs
its own benchmarks/bench_<op>.py with its own library (PYTHONPATH), so rows are matched by (case, impl); a
row that only one tree has is listed without a ratio. Writes OUT/before/, OUT/after/ (JSON) and
OUT/compare.md: per gpuprim row the two medians and after / before - 1 (a row slower by more than --tolerance
is marked). Exit status 0 when every op ran in both trees.
"""
from __future__ import annotations

import argparse
import json
import os
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
    args = parser.parse_args()
    ops = [op for op in args.only.split(",") if op] or sorted(
        p.stem[len("bench_"):] for p in (args.after / "benchmarks").glob("bench_*.py"))
    ok = True
    lines = ["| op | case | impl | before ms | after ms | change |", "|---|---|---|---:|---:|---:|"]
    for op in ops:
        for name, tree in (("before", args.before), ("after", args.after)):
            ok &= run(tree.resolve(), op, args.out / name, args.cub_bin, args.timeout)
        before, after = rows(args.out / "before" / f"{op}.json"), rows(args.out / "after" / f"{op}.json")
        for key in sorted(set(before) | set(after)):
            if not key[1].startswith("gpuprim"):
                continue
            b, a = before.get(key), after.get(key)
            b_ms = f"{b['median_ms']:.4f}" if b else "-"
            a_ms = f"{a['median_ms']:.4f}" if a else "-"
            change = ""
            if a and b:
                delta = a["median_ms"] / b["median_ms"] - 1
                change = f"{delta:+.1%}" + (" **slower**" if delta > args.tolerance else "")
            lines.append(f"| {op} | {key[0]} | {key[1]} | {b_ms} | {a_ms} | {change} |")
        (args.out / "compare.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
