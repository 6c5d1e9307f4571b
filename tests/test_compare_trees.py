"""benchmarks/compare_trees.py: one round runs before then after; --rounds alternates which tree goes first and
reports the medians over the rounds with each round's change."""
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_trees.py"

# A stand-in benchmark: its gpuprim row's time is the tree's base time, plus 1 ms when it runs first in a pair,
# so a comparison that always runs one tree first sees a change that is not there.
BENCH = """
import argparse, json, os, sys
from pathlib import Path
parser = argparse.ArgumentParser()
parser.add_argument("--out")
args = parser.parse_args()
log = Path(os.environ["ORDER_LOG"])
runs = log.read_text().split() if log.exists() else []
first = len(runs) % 2 == 0
log.write_text(" ".join(runs + [TREE]))
ms = BASE + (1.0 if first else 0.0)
Path(args.out).mkdir(parents=True, exist_ok=True)
rows = [{"case": "c", "impl": "gpuprim", "median_ms": ms}, {"case": "c", "impl": "torch", "median_ms": 9.0}]
(Path(args.out) / "fake.json").write_text(json.dumps({"rows": rows}))
"""


def make_tree(root: Path, name: str, base_ms: float) -> Path:
    tree = root / name
    (tree / "benchmarks").mkdir(parents=True)
    (tree / "torch_ops").mkdir()
    (tree / "benchmarks" / "bench_fake.py").write_text(f"TREE = {name!r}\nBASE = {base_ms}\n" + BENCH)
    return tree


def compare(tmp_path: Path, rounds: int) -> str:
    before, after = make_tree(tmp_path, "before", 2.0), make_tree(tmp_path, "after", 2.0)
    out = tmp_path / "out"
    env = {"ORDER_LOG": str(tmp_path / "order.txt"), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, str(SCRIPT), "--before", str(before), "--after", str(after), "--out", str(out),
                    "--only", "fake", "--rounds", str(rounds)], check=True, env=env, capture_output=True)
    return (out / "compare.md").read_text()


def test_one_round_runs_before_first(tmp_path):
    table = compare(tmp_path, 1)
    assert (tmp_path / "order.txt").read_text().split() == ["before", "after"]
    assert "| fake | c | gpuprim | 3.0000 | 2.0000 | -33.3% |" in table  # the order's bias, seen as a change
    assert "torch" not in table
    assert json.loads((tmp_path / "out" / "before" / "fake.json").read_text())["rows"]


def test_rounds_alternate_the_order_and_cancel_its_bias(tmp_path):
    table = compare(tmp_path, 2)
    assert (tmp_path / "order.txt").read_text().split() == ["before", "after", "after", "before"]
    assert "| fake | c | gpuprim | 2.5000 | 2.5000 | +0.0% | -33.3%, +50.0% |" in table
    for name in ("before_r0", "after_r0", "before_r1", "after_r1"):
        assert (tmp_path / "out" / name / "fake.json").exists()
