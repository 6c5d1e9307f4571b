"""gpuprim quickstart: runs every op on CUDA if present (else CPU), checks it against torch, prints a short
comparison table, then shows what gpuprim is for: bitwise reproducible results and gradients, MoE routing
without host syncs, and torch.compile(fullgraph=True) over gpuprim ops.

    make quickstart      # or: python examples/quickstart.py [--device cpu|cuda]

On the CPU the kernels are gpuprim's reference implementations (written to be read and to test the CUDA
kernels against), so the CPU timings say nothing about gpuprim's speed: README's benchmark table does.
"""
from __future__ import annotations

import argparse
import contextlib
import time

import torch

import gpuprim


def timed(fn, device: str, reps: int = 20) -> float:
    """Median milliseconds per call (CUDA: synchronized around each call)."""
    fn()
    times = []
    for _ in range(reps):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def cases(device: str):
    """(name, gpuprim call, torch call, how to compare) for every op."""
    g = torch.Generator(device=device).manual_seed(0)
    n = 1 << 22 if device == "cuda" else 1 << 18
    values = torch.randn(n, device=device, generator=g)
    rows = torch.randn(256, 4096, device=device, generator=g)
    bins = torch.randint(0, 256, (n,), device=device, generator=g)
    weights = torch.rand(n, device=device, generator=g)
    yield ("cumsum fp32 1-D", lambda: gpuprim.cumsum(values), lambda: torch.cumsum(values, 0), "close")
    yield ("cumsum rows, exclusive", lambda: gpuprim.cumsum(rows, 1, exclusive=True),
           lambda: torch.cumsum(rows, 1) - rows, "close")
    yield ("cumsum int32", lambda: gpuprim.cumsum(bins.int()), lambda: torch.cumsum(bins.int(), 0), "equal")
    yield ("bincount 256 bins", lambda: gpuprim.bincount(bins, 256), lambda: torch.bincount(bins, minlength=256),
           "equal")
    yield ("bincount weighted", lambda: gpuprim.bincount(bins, 256, weights),
           lambda: torch.bincount(bins, weights, minlength=256), "close")
    yield ("histogram 64 bins", lambda: gpuprim.histogram(values, 64, -3.0, 3.0).double(),
           lambda: torch.histc(values, 64, -3.0, 3.0).double(), "close")
    yield ("sort fp32 rows", lambda: gpuprim.sort(rows, 1)[0], lambda: torch.sort(rows, dim=1, stable=True)[0], "equal")
    yield ("argsort int64 1-D", lambda: gpuprim.argsort(bins), lambda: torch.sort(bins, stable=True)[1], "equal")
    yield ("sort_values int64 1-D", lambda: gpuprim.sort_values(bins), lambda: torch.sort(bins).values, "equal")
    offsets = torch.tensor([0, 10, 10, 200, 256], device=device)
    yield ("segment_reduce sum", lambda: gpuprim.segment_reduce(rows, offsets, "sum"),
           lambda: torch.segment_reduce(rows, "sum", offsets=offsets, axis=0), "close")
    yield ("segment_reduce max", lambda: gpuprim.segment_reduce(rows[:, :8], offsets, "max"),
           lambda: torch.stack([rows[a:b, :8].amax(0) if b > a else torch.zeros(8, device=device)
                                for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]), "equal")
    yield ("sum fp32 (exact)", lambda: gpuprim.sum(values), lambda: values.double().sum().float(), "close")
    yield ("mean rows", lambda: gpuprim.mean(rows, 1), lambda: rows.mean(1), "close")
    mask = values > 0
    yield ("compact (count)", lambda: gpuprim.compact(values, mask)[1], lambda: mask.sum().reshape(1), "equal")
    runs = bins // 64
    yield ("run_length_encode", lambda: gpuprim.run_length_encode(runs)[1][:4],
           lambda: torch.unique_consecutive(runs, return_counts=True)[1][:4], "equal")
    keys = bins.int()
    yield ("sort_pairs int32", lambda: gpuprim.sort_pairs(keys, values)[1],
           lambda: values[torch.sort(keys, stable=True)[1]], "equal")
    # Distinct values (no ties), so torch.topk's indices are unique too.
    logits = torch.randperm(256 * 4096, device=device, generator=g).float().reshape(256, 4096)
    yield ("topk k=8", lambda: gpuprim.topk(logits, 8)[1], lambda: torch.topk(logits, 8)[1], "equal")
    router = logits[:, :64]
    yield ("topk_gating k=2", lambda: gpuprim.topk_gating(router / 1e5, 2)[0],
           lambda: (lambda p: p / p.sum(1, keepdim=True))(torch.softmax(router / 1e5, 1).topk(2)[0]), "close")
    table = torch.randn(10000, 64, device=device, generator=g)
    ids = torch.randint(0, 10000, (4096 * 20,), device=device, generator=g)
    bag_offsets = torch.arange(0, ids.numel(), 20, device=device)
    yield ("embedding_bag sum", lambda: gpuprim.embedding_bag(table, ids, bag_offsets, mode="sum"),
           lambda: torch.nn.functional.embedding_bag(ids, table, bag_offsets, mode="sum"), "close")
    dest = torch.zeros(10000, 64, device=device)
    yield ("index_add", lambda: gpuprim.index_add(dest, 0, ids[:4096], rows[:, :64].repeat(16, 1)),
           lambda: dest.index_add(0, ids[:4096], rows[:, :64].repeat(16, 1)), "close")


def compare_with_torch(device: str) -> int:
    """The table: every op against torch. Returns how many disagree."""
    if device == "cpu":
        print("CPU: gpuprim's reference kernels (readable, the CUDA kernels' test oracle). Their times are not "
              "gpuprim's speed; that is measured on the GPU (README, Benchmarks).")
    print(f"{'op':<26} {'agrees with torch':<20} {'gpuprim ms':>11} {'torch ms':>9} {'speedup':>8}")
    failures = 0
    for label, ours, theirs, compare in cases(device):
        a, b = ours(), theirs()
        if compare == "equal":
            ok, detail = torch.equal(a, b), "exact"
        else:
            err = ((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30)).item()
            ok, detail = err < 1e-4, f"rel err {err:.1e}"
        failures += not ok
        ours_ms, theirs_ms = timed(ours, device), timed(theirs, device)
        verdict = ("yes, " if ok else "NO, ") + detail
        speedup = f"{theirs_ms / ours_ms:>7.2f}x" if device == "cuda" else "    (ref)"
        print(f"{label:<26} {verdict:<20} {ours_ms:>11.3f} {theirs_ms:>9.3f} {speedup}")
    return failures


def show_determinism(device: str) -> bool:
    """Reproducible sums and gradients: the same bits whatever the order of the inputs, run after run."""
    g = torch.Generator(device=device).manual_seed(1)
    x = torch.randn(1 << 20, device=device, generator=g) * 1e3
    perm = torch.randperm(x.numel(), device=device, generator=g)
    same_sum = torch.equal(gpuprim.sum(x), gpuprim.sum(x[perm]))
    torch_same = torch.equal(x.sum(), x[perm].sum())
    print(f"  gpuprim.sum of 1M floats, shuffled: {'the same bits' if same_sum else 'DIFFERENT bits'} "
          f"(torch.sum: {'the same' if torch_same else 'different'} bits); exact, rounded once, CPU == CUDA")
    table = torch.randn(1000, 64, device=device, generator=g, requires_grad=True)
    ids = torch.randint(0, 100, (20000,), device=device, generator=g)  # hot rows: many bags share them
    offsets = torch.arange(0, ids.numel(), 20, device=device)
    grads = []
    with gpuprim.deterministic(True):
        for _ in range(2):
            table.grad = None
            gpuprim.embedding_bag(table, ids, offsets, mode="mean").square().sum().backward()
            grads.append(table.grad.clone())
    same_grad = torch.equal(grads[0], grads[1])
    print(f"  embedding_bag gradient, two runs: {'bitwise equal' if same_grad else 'DIFFERENT'} "
          "(sort + fixed-order sums, no float atomics)")
    return same_sum and same_grad


def show_sync_free_routing(device: str) -> bool:
    """MoE routing whose output sizes follow from the arguments: nothing waits for the GPU."""
    tokens, experts, k, hidden, pad_to = 512, 16, 2, 64, 8
    logits = torch.randn(tokens, experts, device=device)
    h = torch.randn(tokens, hidden, device=device)
    # Sizes alone, from meta tensors (no data at all): the same sizes the real call gives.
    meta = gpuprim.moe_route(logits.to("meta"), k, pad_to=pad_to)
    sync_check = torch.cuda.set_sync_debug_mode if device == "cuda" else None
    with contextlib.ExitStack() as stack:
        if sync_check:  # any host sync in route / permute / unpermute raises
            sync_check("error")
            stack.callback(sync_check, "default")
        routing = gpuprim.moe_route(logits, k, pad_to=pad_to)
        permuted = gpuprim.moe_permute(h, routing)
        out = gpuprim.moe_unpermute(permuted * 2, routing, routing.gates)
    reference = 2 * h * routing.gates.sum(1, keepdim=True)
    ok = meta.token_ids.shape == routing.token_ids.shape and torch.allclose(out, reference, atol=1e-5)
    how = "no host sync (sync debug mode 'error')" if sync_check else "sizes known from meta tensors alone"
    print(f"  moe_route + permute + unpermute, {tokens} tokens, {experts} experts, top-{k}: buffer "
          f"{tuple(permuted.shape)} = T*k + E*(pad_to-1) rows, {how}; {'correct' if ok else 'WRONG'}")
    return ok


def show_torch_compile(device: str) -> bool:
    """torch.compile(fullgraph=True) traces gpuprim ops (fake kernels with symbolic sizes): no graph breaks."""

    def sample(logits: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
        values, ids = gpuprim.topk(logits, 8)
        cdf = gpuprim.cumsum(torch.softmax(values, -1), -1)
        choice = (cdf < uniform[:, None]).sum(-1, keepdim=True).clamp(max=7)
        return ids.gather(-1, choice).squeeze(-1)

    compiled = torch.compile(sample, fullgraph=True, dynamic=True)  # Inductor: generated code around our ops
    logits, uniform = torch.randn(64, 1000, device=device), torch.rand(64, device=device)
    start = time.perf_counter()
    ok = torch.equal(compiled(logits, uniform), sample(logits, uniform))
    ok = ok and torch.equal(compiled(logits[:40], uniform[:40]), sample(logits[:40], uniform[:40]))  # no recompile
    seconds = time.perf_counter() - start
    print(f"  torch.compile(fullgraph=True, dynamic=True) of top-k sampling (gpuprim.topk, cumsum): "
          f"{'same tokens as eager' if ok else 'DIFFERENT from eager'}, compiled in {seconds:.0f} s")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    device = parser.parse_args().device
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    info = gpuprim.build_info() or {}
    build = (f"CUDA {info['cuda']} for {', '.join(info['cuda_architectures'])}" if info.get("cuda")
             else "CPU-only build" if info else "build not recorded")
    print(f"gpuprim {gpuprim.__version__} ({build}) | torch {torch.__version__} | device: {name}")
    failures = compare_with_torch(device)
    print("What gpuprim is for:")
    shown = [show_determinism(device), show_sync_free_routing(device), show_torch_compile(device)]
    if failures or not all(shown):
        raise SystemExit(f"{failures} op(s) disagree with torch; {shown.count(False)} demonstration(s) failed")
    print("all ops agree with torch. Timings here are wall-clock; benchmarks/ measures properly (CUDA events).")


if __name__ == "__main__":
    main()
