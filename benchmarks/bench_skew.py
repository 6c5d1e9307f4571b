"""Skew mode: the ops whose speed depends on the id distribution, on the distributions real inputs have, and the
small-batch calls whose cost is mostly launch and host time.

python3 benchmarks/bench_skew.py --out DIR [--quick] [--only embedding_bag,index_add,topk,topk_gating]
    [--match giant_bag,adjacent]   (or env GPUPRIM_SKEW_OPS, GPUPRIM_BENCH_MATCH="skew:giant_bag,adjacent")

Id distributions over a vocabulary of R rows: uniform; Zipf with exponent 1.0 and 1.2 whose hot ranks are
scattered over the table (a random permutation) or adjacent at the lowest ids (a vocabulary numbered by
descending frequency); all ids equal; and for embedding_bag a batch holding one bag of 500k ids among bags of 20.
- skew_embedding_bag: forward and backward (torch's default backward as anchor; the dense gradient write is
  the floor), sum and mean, fp32 and bf16, 1M x 128 and 10M x 64 tables, 65536 bags x 20 ids; sparse=True
  backward on the 10M table.
- skew_index_add: gpuprim's deterministic index_add against torch's index_add_ (default, and deterministic).
- skew_topk / skew_topk_gating: whole-call time of 200 calls back to back (CUDA events around each batch
  of 20 Python calls, host included, no L2 flush) for LLM decode sampling and MoE gating shapes; host_us is
  the host's time to issue one call (best of 7 batches of 32 calls, each from an idle GPU, so the launch queue
  never fills and the GPU is not waited for): host_us close to the whole-call time means the call is host bound.
Each op writes DIR/skew_<op>.json and a plot of its ratios against torch, DIR/skew_<op>.png; DIR/skew.json holds
every row for run_all's summary. A text progress bar goes to stderr.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import torch
import torch.nn.functional as F

import distributions
import gpuprim
import timing
from bench_embedding_bag import _torch_backward, forward_and_backward
from bench_index_add import _torch_deterministic

BAG = 20
GIANT_BAG = 500_000
DISTRIBUTIONS = ("uniform", "zipf1.0_scattered", "zipf1.2_scattered", "zipf1.0_adjacent", "zipf1.2_adjacent",
                 "all_equal")


# ---------------------------------------------------------------- embedding_bag
def _embedding_bag(case: str, rows: int, d: int, dtype: torch.dtype, mode: str, dist: str, n: int,
                   sparse: bool) -> List[timing.Row]:
    g = torch.Generator(device=timing.DEVICE).manual_seed(1)
    weight = torch.randn(rows, d, device=timing.DEVICE, generator=g).to(dtype)
    giant = min(GIANT_BAG, n // 2) if dist == "giant_bag" else 0  # ids of the giant bag: uniform
    idx = distributions.ids("uniform" if giant else dist, rows, n)
    offsets = distributions.bag_offsets(n, BAG, giant)
    bags = offsets.numel()
    grad = torch.randn(bags, d, device=timing.DEVICE, generator=g).to(dtype)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype != torch.float32 else dict(rtol=1e-4, atol=1e-4)
    esize = weight.element_size()
    common = dict(shape=(rows, d), dtype=dtype, numel=n, indices=dist, mode=mode)
    out: List[timing.Row] = []
    if sparse:  # the whole autograd backward of a sparse-gradient lookup, both sides
        w_ours, w_torch = weight.detach().requires_grad_(), weight.detach().requires_grad_()
        ours_out = gpuprim.embedding_bag(w_ours, idx, offsets, mode, sparse=True)
        torch_out = F.embedding_bag(idx, w_torch, offsets, mode=mode, sparse=True)
        specs = [("backward", "gpuprim", lambda: torch.autograd.grad(ours_out, w_ours, grad, retain_graph=True)[0]),
                 ("backward", "torch", lambda: torch.autograd.grad(torch_out, w_torch, grad, retain_graph=True)[0])]
        expected = specs[1][2]().to_dense().float()  # hot rows sum 10^5 terms: fp32 order differs, scale atol
        torch.testing.assert_close(specs[0][2]().to_dense().float(), expected, rtol=tol["rtol"],
                                   atol=tol["atol"] * (float(expected.abs().max()) + 1))
        del expected
        nbytes = {"backward": 2 * n * d * esize + n * 8}
    else:
        ours_fwd, torch_fwd, ours_bwd = forward_and_backward(weight, idx, offsets, mode, grad, tol)
        torch_bwd = _torch_backward(weight, idx, offsets, mode, grad, False)
        # Against fp32 math: a 16-bit gradient summed in 16-bit (torch's CPU) drifts on hot rows, gpuprim's does not.
        expected = _torch_backward(weight.float(), idx, offsets, mode, grad.float(), False)()
        torch.testing.assert_close(ours_bwd().float(), expected, rtol=tol["rtol"],
                                   atol=tol["atol"] * (float(expected.abs().max()) + 1))
        del expected
        specs = [("forward", "gpuprim", ours_fwd), ("forward", "torch", torch_fwd),
                 ("backward", "gpuprim", ours_bwd), ("backward", "torch", torch_bwd),
                 ("backward", "dense_zero_fill", lambda: torch.zeros(rows, d, device=timing.DEVICE, dtype=dtype))]
        nbytes = {"forward": n * d * esize + bags * d * esize + n * 8,
                  "backward": n * d * esize + rows * d * esize + n * 8}
    for pass_kind, impl, fn in specs:
        try:
            out.append(timing.record("skew_embedding_bag", f"{case}_{pass_kind}", impl, timing.bench(fn),
                                     bytes_moved=nbytes[pass_kind], **common))
        except Exception as error:  # noqa: BLE001 - an anchor that fails must not hide gpuprim's rows
            out.append(timing.error_record("skew_embedding_bag", f"{case}_{pass_kind}", impl, error))
    return out


def embedding_bag_cases(quick: bool) -> List[dict]:
    div = timing.size_divisor(quick)
    n = 65536 * BAG // div
    specs = []
    for rows, d, table in ((1 << 20, 128, "1Mx128"), (10_000_000, 64, "10Mx64")):
        for dtype, dname in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
            for mode in ("sum", "mean"):
                for dist in DISTRIBUTIONS + ("giant_bag",):
                    specs.append(dict(case=f"{mode}_{dist}_{table}_{dname}", rows=rows // div, d=d, dtype=dtype,
                                      mode=mode, dist=dist, n=n, sparse=False))
    for dist in ("uniform", "zipf1.2_adjacent"):
        specs.append(dict(case=f"sum_{dist}_10Mx64_f32_sparse", rows=10_000_000 // div, d=64, dtype=torch.float32,
                          mode="sum", dist=dist, n=n, sparse=True))
    return specs


# ---------------------------------------------------------------- index_add
def _index_add(case: str, rows: int, items: int, width: int, dist: str) -> List[timing.Row]:
    input = torch.randint(-2, 3, (rows, width), device=timing.DEVICE).float()
    source = torch.randint(-2, 3, (items, width), device=timing.DEVICE).float()
    index = distributions.ids(dist, rows, items)
    out = torch.empty_like(input)
    ours = lambda: torch.ops.gpuprim.index_add.default(input, 0, index, source, deterministic=True)  # noqa: E731
    plain = lambda: out.copy_(input).index_add_(0, index, source)  # noqa: E731

    deterministic = _torch_deterministic(plain)
    timing.assert_equal(ours(), deterministic().clone(), f"index_add {case}")  # small integers: exact sums
    common = dict(bytes_moved=2 * input.numel() * 4 + source.numel() * 4 + items * 8, shape=(items, width),
                  dtype=torch.float32, numel=source.numel(), pattern=dist)
    result = [timing.record("skew_index_add", case, "gpuprim_deterministic", timing.bench(ours), **common)]
    result.append(timing.record("skew_index_add", case, "torch_index_add_", timing.bench(plain), **common))
    result.append(timing.record("skew_index_add", case, "torch_index_add_deterministic",
                                timing.bench(deterministic, warmup=1, reps=5), **common))
    return result


def index_add_cases(quick: bool) -> List[dict]:
    div = timing.size_divisor(quick)
    return [dict(case=f"{dist}_1.3Mx128_into_1M_f32", rows=(1 << 20) // div, items=1_300_000 // div, width=128,
                 dist=dist) for dist in DISTRIBUTIONS]


# ---------------------------------------------------------------- small batches (whole-call time)
def host_time_us(fn: Callable[[], object], calls: int = 32, rounds: int = 7) -> float:
    """The host's time to issue one call, the GPU not waited for: the best of `rounds` batches of `calls` calls,
    each batch started on an idle GPU and short enough that its launches never fill the launch queue (a full
    queue makes the host wait for the GPU, and the time would be the GPU's)."""
    for _ in range(8):
        fn()
    best = float("inf")
    for _ in range(rounds):
        torch.cuda.synchronize() if timing.DEVICE == "cuda" else None
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    torch.cuda.synchronize() if timing.DEVICE == "cuda" else None
    return best


def _small_batch(op: str, case: str, impls: Dict[str, Callable[[], object]], nbytes: int, shape: tuple,
                 check: Callable[[], None]) -> List[timing.Row]:
    check()
    rows = []
    for impl, fn in impls.items():
        row = timing.record(op, case, impl, timing.wall_time(fn), bytes_moved=nbytes, shape=shape,
                            dtype=torch.float32, numel=shape[0] * shape[1])
        row["host_us"] = host_time_us(fn)
        rows.append(row)
    return rows


def _topk(case: str, rows: int, cols: int, k: int) -> List[timing.Row]:
    x = torch.randn(rows, cols, device=timing.DEVICE, generator=torch.Generator(timing.DEVICE).manual_seed(0))

    def check() -> None:
        values, _ = gpuprim.topk(x, k)
        timing.assert_equal(values, torch.topk(x, k).values, f"topk {case}")

    impls = {"gpuprim": lambda: gpuprim.topk(x, k), "torch": lambda: torch.topk(x, k)}
    return _small_batch("skew_topk", case, impls, x.numel() * 4 + rows * k * 12, (rows, cols), check)


def _topk_gating(case: str, tokens: int, experts: int, k: int) -> List[timing.Row]:
    logits = torch.randn(tokens, experts, device=timing.DEVICE, generator=torch.Generator(timing.DEVICE).manual_seed(0))

    def reference():
        gates, experts_chosen = torch.topk(torch.softmax(logits, -1), k)
        return gates / gates.sum(-1, keepdim=True), experts_chosen

    def check() -> None:
        gates, chosen = gpuprim.topk_gating(logits, k)[:2]
        want_gates, want_chosen = reference()
        assert torch.equal(chosen.long(), want_chosen), f"topk_gating {case}: experts differ"
        torch.testing.assert_close(gates, want_gates)

    impls = {"gpuprim": lambda: gpuprim.topk_gating(logits, k), "torch": reference}
    return _small_batch("skew_topk_gating", case, impls, logits.numel() * 4 + tokens * k * 12, (tokens, experts),
                        check)


SMALL_BATCH = {
    "topk": (_topk, [dict(case="decode_64x128256_k50", rows=64, cols=128256, k=50),
                     dict(case="one_row_16M_k100", rows=1, cols=1 << 24, k=100)]),
    "topk_gating": (_topk_gating, [dict(case="1024x256_k8", tokens=1024, experts=256, k=8)]),
}


# ---------------------------------------------------------------- driver
def progress_bar(done: int, total: int, label: str) -> None:
    filled = int(30 * done / max(total, 1))
    live = sys.stderr.isatty()  # redraw one line on a terminal, a line per step in a log
    print(f"{chr(13) if live else ''}[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} {label[:60]:<60}",
          end="\n" if done == total or not live else "", file=sys.stderr, flush=True)


def plot_ratios(op: str, rows: List[timing.Row], path: Path) -> None:
    """One bar per gpuprim row: torch's time / gpuprim's (> 1: gpuprim faster), log scale, 1x marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    def torch_ratio(row: timing.Row) -> Optional[float]:  # against torch's default call (the first torch anchor)
        keys = [key for key in row if key.startswith("speedup_vs_torch") and "deterministic" not in key]
        return float(row[keys[0]]) if keys else None  # type: ignore[arg-type]

    bars = [(str(row["case"]), ratio) for row in rows if (ratio := torch_ratio(row)) is not None]
    if not bars:
        return
    figure, axis = plt.subplots(figsize=(max(6.0, 0.22 * len(bars)), 4.5))
    axis.bar(range(len(bars)), [ratio for _, ratio in bars],
             color=["tab:green" if ratio >= 1 else "tab:red" for _, ratio in bars])
    axis.axhline(1.0, color="gray", linestyle="--")
    axis.set_yscale("log")
    axis.set_xticks(range(len(bars)))
    axis.set_xticklabels([case for case, _ in bars], rotation=90, fontsize=6)
    axis.set_ylabel("torch ms / gpuprim ms")
    axis.set_title(f"gpuprim {op[len('skew_'):]} on skewed inputs")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run(out_dir: str, quick: bool = False, only: Optional[List[str]] = None,
        match: Optional[List[str]] = None) -> List[timing.Row]:
    plan = [("skew_embedding_bag", _embedding_bag, embedding_bag_cases(quick)),
            ("skew_index_add", _index_add, index_add_cases(quick))]
    plan += [(f"skew_{name}", measure, specs) for name, (measure, specs) in SMALL_BATCH.items()]
    plan = [entry for entry in plan if not only or entry[0][len("skew_"):] in only]
    if match:  # only the cases whose names hold one of these parts
        plan = [(op, measure, [spec for spec in specs if any(part in spec["case"] for part in match)])
                for op, measure, specs in plan]
    total, done, every = sum(len(specs) for _, _, specs in plan), 0, []
    for op, measure, specs in plan:
        rows: List[timing.Row] = []
        for spec in specs:
            progress_bar(done, total, f"{op} {spec['case']}")
            rows += timing.run_case(op, spec["case"], lambda: measure(**spec))
            timing.save_partial(op, rows, out_dir)
            done += 1
        timing.add_ratios(rows)
        timing.print_table(rows)
        timing.write_results(op, rows, out_dir, timing.collect_meta())
        plot_ratios(op, rows, Path(out_dir) / f"{op}.png")
        every += rows
    progress_bar(total, total, "done")
    timing.write_results("skew", every, out_dir, timing.collect_meta())
    return every


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--cub-bin", default=None, help="unused (no CUB anchor here); run_all passes it")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default=os.environ.get("GPUPRIM_SKEW_OPS", ""),
                        help="comma list of embedding_bag, index_add, topk, topk_gating (env GPUPRIM_SKEW_OPS)")
    parser.add_argument("--match", default=",".join(timing.case_filter("skew")),
                        help="comma list: only cases whose names contain one of these (env GPUPRIM_BENCH_MATCH)")
    args = parser.parse_args()
    run(args.out, args.quick, [name for name in args.only.split(",") if name],
        [part for part in args.match.split(",") if part])
