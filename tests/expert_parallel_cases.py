"""The cases of tests/test_expert_parallel.py, run inside every spawned rank (gloo on CPU, or NCCL on one GPU).

Every rank builds all ranks' inputs from one seed, runs gpuprim.distributed on its own share, and compares with
the single-process composition (moe_route + moe_permute + experts + moe_unpermute) of the same inputs.
"""
from __future__ import annotations

import datetime
import json
import traceback
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import torch
import torch.distributed as dist

import gpuprim
from gpuprim.distributed import combine, dispatch


@dataclass
class Case:
    tokens: List[int]  # per rank, padded with the last value where there are more ranks
    hidden: int = 16
    local_experts: int = 2
    k: int = 2
    capacity: Optional[int] = None
    pad_to: int = 1
    peaked: bool = False  # logits that send most tokens to a few experts (drops, experts with zero tokens)


CASES: Dict[str, Case] = {
    "dropless": Case([13, 7]),
    "dropless_pad8": Case([9, 20], pad_to=8),
    "capacity_drops": Case([24, 17], capacity=3, pad_to=4, peaked=True),
    "capacity_no_drops": Case([5, 6], capacity=16),
    "zero_token_experts": Case([3, 2], local_experts=4, peaked=True),
    "rank_with_zero_tokens": Case([11, 0]),
    "rank_with_zero_tokens_capacity": Case([0, 9], capacity=4, pad_to=2),
    "k1": Case([15, 4], k=1),
    "k8": Case([10, 12], local_experts=8, k=8, pad_to=4),  # 8 local experts: k <= E in a group of one rank too
    "k8_capacity": Case([10, 12], local_experts=8, k=8, capacity=5),
}


def make_inputs(case: Case, world: int, seed: int = 0):
    tokens = (case.tokens + [case.tokens[-1]] * world)[:world]
    experts = case.local_experts * world
    gen = torch.Generator().manual_seed(seed)
    hidden = [torch.randn(t, case.hidden, generator=gen) for t in tokens]
    logits = [torch.randn(t, experts, generator=gen) * (4.0 if case.peaked else 1.0) for t in tokens]
    if case.peaked:
        for x in logits:
            x[:, :2] += 6.0  # experts 0 and 1 take most tokens
    proj = [torch.randn(t, case.hidden, generator=gen) for t in tokens]
    weights = torch.randn(experts, case.hidden, case.hidden, generator=gen) / case.hidden ** 0.5
    return hidden, logits, proj, weights


def run_experts(x: torch.Tensor, ends: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """tanh(row @ W[e]) with e found from the blocks' end offsets on the device (rows past the end: last expert)."""
    rows = torch.arange(x.size(0), device=x.device)
    expert = torch.searchsorted(ends, rows, right=True).clamp(max=weights.size(0) - 1)
    return torch.tanh(torch.bmm(x.unsqueeze(1), weights[expert]).squeeze(1))


def distributed_step(case: Case, rank: int, world: int, device: torch.device, seed: int = 0):
    hidden, logits, proj, weights = make_inputs(case, world, seed)
    L = case.local_experts
    h = hidden[rank].to(device).requires_grad_()
    lg = logits[rank].to(device).requires_grad_()
    w = weights[rank * L:(rank + 1) * L].to(device).requires_grad_()
    routing = gpuprim.moe_route(lg, case.k, capacity=case.capacity)
    expert_input, handle = dispatch(h, routing, num_local_experts=L, capacity=case.capacity, pad_to=case.pad_to)
    y = run_experts(expert_input, handle.offsets[1:], w)
    out = combine(y, handle, routing.gates)
    (out * proj[rank].to(device)).sum().backward()
    return out.detach(), h.grad, lg.grad, w.grad, expert_input.detach(), handle


def reference_step(case: Case, world: int, seed: int = 0):
    """Single process: one moe_route over every rank's tokens when dropless; per rank with a capacity (the
    capacity is per (source rank, expert))."""
    hidden, logits, proj, weights = make_inputs(case, world, seed)
    hidden = [x.requires_grad_() for x in hidden]
    logits = [x.requires_grad_() for x in logits]
    weights.requires_grad_()
    groups = [list(range(world))] if case.capacity is None else [[r] for r in range(world)]
    outs: List[torch.Tensor] = []
    loss = torch.zeros(())
    for ranks in groups:
        h = torch.cat([hidden[r] for r in ranks])
        routing = gpuprim.moe_route(torch.cat([logits[r] for r in ranks]), case.k, capacity=case.capacity)
        y = run_experts(gpuprim.moe_permute(h, routing), routing.offsets[1:], weights)
        out = gpuprim.moe_unpermute(y, routing, routing.gates)
        outs += list(out.split([hidden[r].size(0) for r in ranks]))
        loss = loss + (out * torch.cat([proj[r] for r in ranks])).sum()
    loss.backward()
    blocks = []  # expert e's rows: every rank's routed rows of e, in rank order
    for e in range(weights.size(0)):
        rows = []
        for r in range(world):
            routing = gpuprim.moe_route(logits[r].detach(), case.k, capacity=case.capacity)
            lo, n = int(routing.offsets[e]), int(routing.counts[e])
            rows.append(gpuprim.moe_permute(hidden[r].detach(), routing)[lo:lo + n])
        blocks.append(torch.cat(rows))
    return ([o.detach() for o in outs], [x.grad for x in hidden], [x.grad for x in logits], weights.grad, blocks)


def check_case(name: str, rank: int, world: int, device: torch.device) -> None:
    case = CASES[name]
    out, h_grad, lg_grad, w_grad, expert_input, handle = distributed_step(case, rank, world, device)
    ref_out, ref_h, ref_lg, ref_w, blocks = reference_step(case, world)
    L = case.local_experts
    offsets = handle.offsets.tolist()
    for local in range(L):
        got = expert_input[offsets[local]:offsets[local + 1]].cpu()
        want = blocks[rank * L + local]
        assert offsets[local + 1] - offsets[local] == -(-want.size(0) // case.pad_to) * case.pad_to, "block size"
        assert torch.equal(got[:want.size(0)], want), f"expert {rank * L + local}'s rows"
        assert not got[want.size(0):].any(), "padding rows are zero"
    assert not expert_input[offsets[L]:].any(), "rows past offsets[L] are zero"
    tol = dict(rtol=1e-5, atol=1e-5)
    if device.type == "cpu":
        assert torch.equal(out, ref_out[rank]), "combine output equals the single-process unpermute bitwise"
    else:  # the reference runs on the CPU
        torch.testing.assert_close(out.cpu(), ref_out[rank], **tol)
    torch.testing.assert_close(h_grad.cpu(), ref_h[rank], **tol)
    torch.testing.assert_close(lg_grad.cpu(), ref_lg[rank], **tol)
    torch.testing.assert_close(w_grad.cpu(), ref_w[rank * L:(rank + 1) * L], **tol)


def check_deterministic(rank: int, world: int, device: torch.device) -> None:
    for name in ("dropless_pad8", "capacity_drops", "k8"):
        first = distributed_step(CASES[name], rank, world, device, seed=3)[:5]
        second = distributed_step(CASES[name], rank, world, device, seed=3)[:5]
        for i, (a, b) in enumerate(zip(first, second)):
            if i == 3 and device.type == "cuda":
                continue  # the test's expert weights get their gradient from an indexing backward (atomics on CUDA)
            assert torch.equal(a, b), f"{name}: not bitwise equal across runs"


def expect_error(fragment: str, call: Callable[[], object]) -> None:
    try:
        call()
    except (ValueError, TypeError) as error:
        assert fragment in str(error), f"expected {fragment!r} in the message, got: {error}"
        return
    raise AssertionError(f"no error raised (expected one mentioning {fragment!r})")


def check_bad_input(rank: int, world: int, device: torch.device) -> None:
    gen = torch.Generator().manual_seed(rank)
    h = torch.randn(8, 16, generator=gen).to(device)
    logits = torch.randn(8, 2 * world, generator=gen).to(device)
    routing = gpuprim.moe_route(logits, 2)
    other = gpuprim.moe_route(torch.randn(5, 2 * world, generator=gen).to(device), 2)
    with gpuprim.validate():  # the fixed-capacity mode compares ranks on every call in validate mode
        # One rank's routing comes from another call: that rank names routing, the others name that rank.
        expect_error("routing" if rank == 0 else "rank 0 got a bad routing",
                     lambda: dispatch(h, other if rank == 0 else routing, num_local_experts=2))
        if world > 1:  # one rank's hidden has another width
            wide = torch.randn(8, 24, generator=gen).to(device)
            expect_error("hidden.size(1) must be the same on every rank",
                         lambda: dispatch(wide if rank == world - 1 else h, routing, num_local_experts=2))
        # hidden on another device than the group's.
        expect_error("hidden must be on" if rank == 0 else "rank 0 got a bad hidden",
                     lambda: dispatch(h.to("meta") if rank == 0 else h, routing, num_local_experts=2))
        capped = gpuprim.moe_route(logits, 2, capacity=3)
        expect_error("num_local_experts must be", lambda: dispatch(h, capped, num_local_experts=1, capacity=3))
        expect_error("capacity=4", lambda: dispatch(h, capped, num_local_experts=2, capacity=4))
        if world > 1:
            odd = gpuprim.moe_route(torch.randn(8, 2 * world + 1, generator=gen).to(device), 2)
            expect_error("must divide routing's number of experts", lambda: dispatch(h, odd, num_local_experts=2))
        expect_error("num_local_experts must be >= 1", lambda: dispatch(h, routing, num_local_experts=0))
        # combine: one rank's expert_output has the wrong number of rows.
        x, handle = dispatch(h, routing, num_local_experts=2)
        expect_error("expert_output must be" if rank == world - 1 else "got a bad expert_output",
                     lambda: combine(x[1:] if rank == world - 1 else x, handle, routing.gates))
        # After the errors the ranks are still in step: a good call works.
        out = combine(x, handle, routing.gates)
        assert out.shape == h.shape


CHECKS: Dict[str, Callable[[int, int, torch.device], None]] = {
    **{name: (lambda r, w, d, name=name: check_case(name, r, w, d)) for name in CASES},
    "deterministic": check_deterministic,
    "bad_input": check_bad_input,
}


def worker(rank: int, world: int, init_file: str, out_dir: str, backend: str = "gloo") -> None:
    """One spawned rank: every check, each result ('' or the failure) written to out_dir/rank<rank>.json."""
    torch.set_num_threads(1)
    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))  # a rank left waiting fails instead of hanging
    results: Dict[str, str] = {}
    try:
        for name, check in CHECKS.items():
            try:
                check(rank, world, device)
                results[name] = ""
            except Exception:  # noqa: BLE001 - reported per case
                results[name] = traceback.format_exc()
            with open(f"{out_dir}/rank{rank}.json", "w") as f:
                json.dump(results, f)
    finally:
        dist.destroy_process_group()
