"""gpuprim.embedding_bag vs torch.nn.functional.embedding_bag: forward, and backward in torch's default and
deterministic modes.

python3 benchmarks/bench_embedding_bag.py --out DIR [--quick]

Shapes from issue #5: a 1M x 128 fp32 table, 65536 bags x 20 indices, with uniform, Zipf-like (p(k) ~ 1/k) and
all-equal indices; plus bf16 weights and a 10M x 64 table. Forward rows: gpuprim.embedding_bag vs F.embedding_bag.
Backward rows: gpuprim's registered backward op (sort + segmented reduce) vs torch's autograd backward of
F.embedding_bag, in default mode and under torch.use_deterministic_algorithms(True). Each backward row also
reports peak_extra_mib: torch.cuda.max_memory_allocated() during the call minus the memory allocated before it
(outputs included: the dense gradient is num_embeddings x D for both). Results are checked against torch before
timing (fp32 accumulation in both, different order: allclose), and gpuprim's gradient twice for bitwise equality.
The dense_zero_fill backward rows time torch.zeros of the gradient's shape: the write every dense backward must do
(2.56 GB for the 10M x 64 fp32 table).
Inputs shaped like real ones (1M x 128, fp32 and bf16, sum and mean): giant_bag = one bag of 500k uniform ids
among 65535 bags of 20 (the CUDA forward splits long bags across blocks), giant_bag_ids_in_bags20 = the same
number of ids all in bags of 20 (its goal: giant_bag within 2x of it), and zipf1.0_low / zipf1.2_low = Zipf ids
(p(k) ~ 1/k^s) whose hot rows are adjacent at the lowest ids (a vocabulary numbered by descending frequency).
bytes_moved: forward = the gathered rows + output + indices; backward = the gathered grad rows + the dense
gradient written + indices.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import torch
import torch.nn.functional as F

import distributions
import gpuprim
import timing

OP = "embedding_bag"
NUM_BAGS, BAG = 65536, 20


def _peak_extra_mib(fn: Callable[[], object]) -> float:
    if timing.DEVICE != "cuda":
        return float("nan")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return peak / 2**20


def _torch_backward(weight, idx, offsets, mode, grad, deterministic: bool) -> Callable[[], torch.Tensor]:
    w = weight.detach().requires_grad_()
    out = F.embedding_bag(idx, w, offsets, mode=mode)

    def run():
        previous = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(deterministic)
        try:
            return torch.autograd.grad(out, w, grad, retain_graph=True)[0]
        finally:
            torch.use_deterministic_algorithms(previous)

    return run


def forward_and_backward(weight, idx, offsets, mode, grad, tol) -> Tuple[Callable, Callable, Callable]:
    """(gpuprim forward, torch forward, gpuprim's registered backward op), the forwards checked against each other."""
    ours_fwd = lambda: gpuprim.embedding_bag(weight, idx, offsets, mode)  # noqa: E731
    torch_fwd = lambda: F.embedding_bag(idx, weight, offsets, mode=mode)  # noqa: E731
    expected_fwd = torch_fwd().float()  # a giant bag's column can cancel to ~0: atol scales
    torch.testing.assert_close(ours_fwd().float(), expected_fwd, rtol=tol["rtol"],
                               atol=tol["atol"] * (float(expected_fwd.abs().max()) + 1))
    _, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, mode)
    ours_bwd = lambda: torch.ops.gpuprim.embedding_bag_backward(  # noqa: E731
        grad, weight, idx, offsets, bag_size, max_indices, None, mode, None, False, False)[0]
    return ours_fwd, torch_fwd, ours_bwd


def _measure(case: str, rows: int, d: int, dtype: torch.dtype, indices: str, mode: str,
             n: int, layout: str = "bags") -> List[timing.Row]:
    g = torch.Generator(device=timing.DEVICE).manual_seed(1)
    weight = torch.randn(rows, d, device=timing.DEVICE, dtype=torch.float32, generator=g).to(dtype)
    idx = distributions.ids(indices, rows, n)
    offsets = distributions.bag_offsets(n, BAG, int(layout[len("giant"):]) if layout != "bags" else 0)
    bags = offsets.numel()
    grad = torch.randn(bags, d, device=timing.DEVICE, dtype=torch.float32, generator=g).to(dtype)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype != torch.float32 else dict(rtol=1e-4, atol=1e-4)

    ours_fwd, torch_fwd, ours_bwd = forward_and_backward(weight, idx, offsets, mode, grad, tol)
    torch_default = _torch_backward(weight, idx, offsets, mode, grad, False)
    torch_det = _torch_backward(weight, idx, offsets, mode, grad, True)
    first = ours_bwd()
    expected = torch_default()
    scale = float(expected.abs().max()) + 1
    torch.testing.assert_close(first.float(), expected.float(), rtol=tol["rtol"], atol=tol["atol"] * scale)
    timing.assert_equal(ours_bwd(), first, f"gpuprim.embedding_bag backward {case} (run to run)")
    del first, expected

    esize = weight.element_size()
    fwd_bytes = n * d * esize + bags * d * esize + n * 8
    bwd_bytes = n * d * esize + rows * d * esize + n * 8
    common = dict(shape=(rows, d), dtype=dtype, numel=n, indices=indices, mode=mode)
    out: List[timing.Row] = []
    specs = [
        ("forward", "gpuprim", ours_fwd, fwd_bytes),
        ("forward", "torch", torch_fwd, fwd_bytes),
        ("backward", "gpuprim", ours_bwd, bwd_bytes),
        ("backward", "torch", torch_default, bwd_bytes),
        ("backward", "torch_deterministic", torch_det, bwd_bytes),
        # The floor of any dense backward: writing the num_embeddings x D gradient once (a zero fill).
        ("backward", "dense_zero_fill", lambda: torch.zeros(rows, d, device=timing.DEVICE, dtype=dtype), bwd_bytes),
    ]
    for pass_kind, impl, fn, nbytes in specs:
        try:
            row = timing.record(OP, f"{case}_{pass_kind}", impl, timing.bench(fn), bytes_moved=nbytes, **common)
            if pass_kind == "backward":
                row["peak_extra_mib"] = _peak_extra_mib(fn)
            out.append(row)
        except Exception as error:  # noqa: BLE001 - an anchor that fails must not hide gpuprim's rows
            out.append(timing.error_record(OP, f"{case}_{pass_kind}", impl, error))
    return out


def cases(quick: bool) -> List[dict]:
    rows = (1 << 20) // timing.size_divisor(quick)
    big = 10_000_000 // timing.size_divisor(quick)
    n = NUM_BAGS * BAG // timing.size_divisor(quick)
    specs = []
    for indices in ("uniform", "zipf", "all_equal"):
        for mode in ("sum", "mean"):
            specs.append(dict(case=f"{mode}_{indices}_1Mx128_f32", rows=rows, d=128, dtype=torch.float32,
                              indices=indices, mode=mode))
    specs.append(dict(case="sum_uniform_1Mx128_bf16", rows=rows, d=128, dtype=torch.bfloat16, indices="uniform",
                      mode="sum"))
    specs.append(dict(case="sum_zipf_1Mx128_bf16", rows=rows, d=128, dtype=torch.bfloat16, indices="zipf",
                      mode="sum"))
    specs.append(dict(case="sum_uniform_10Mx64_f32", rows=big, d=64, dtype=torch.float32, indices="uniform",
                      mode="sum"))
    specs.append(dict(case="max_uniform_1Mx128_f32", rows=rows, d=128, dtype=torch.float32, indices="uniform",
                      mode="max"))
    for spec in specs:
        spec["n"] = n
    # Inputs shaped like real ones: a giant bag, the same ids in bags of 20, Zipf with hot rows at the lowest ids.
    giant = 500_000 // timing.size_divisor(quick)
    n_giant = (NUM_BAGS - 1) * BAG // timing.size_divisor(quick) + giant
    for dtype, tag in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for mode in ("sum", "mean"):
            common = dict(rows=rows, d=128, dtype=dtype, mode=mode)
            specs.append(dict(case=f"{mode}_giant_bag_1Mx128_{tag}", indices="uniform", n=n_giant,
                              layout=f"giant{giant}", **common))
            specs.append(dict(case=f"{mode}_giant_bag_ids_in_bags20_1Mx128_{tag}", indices="uniform", n=n_giant,
                              layout="bags", **common))
            for exponent in ("1.0", "1.2"):
                specs.append(dict(case=f"{mode}_zipf{exponent}_low_1Mx128_{tag}", indices=f"zipf{exponent}_low",
                                  n=n, layout="bags", **common))
    return specs


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
