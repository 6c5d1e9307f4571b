"""gpuprim.distributed dispatch + combine (expert parallelism) vs all_to_all_single and a Megatron-style reference.

torchrun --nproc-per-node N benchmarks/bench_expert_parallel.py --out DIR [--quick]    (any N, 1 included)
python3 benchmarks/bench_expert_parallel.py --out DIR [--quick]                         (a group of size 1)

NCCL on GPUs (one per rank), gloo on CPU (a smoke test: wall-clock numbers mean nothing). Per-rank shapes from
the issue, bf16 hidden states: T4096 H7168 E256 k8 and T16384 H4096 E64 k2 (E over all ranks; --quick divides T).
Every rank times the same calls in lockstep; rows report the slowest rank's median (all_reduce MAX).

exchange cases (routing done outside the timing): dispatch + combine with identity experts, fixed capacity
(capacity factor 1.25 per (rank, expert)) and dropless, against all_to_all_single of the same bytes (T*k rows of
H there and T*k rows back, equal splits). bytes = 2*T*k*H*elt per rank; busbw_gbps = bytes*(W-1)/W / time (the
nccl-tests convention for all-to-all, 0 at W = 1: then compare algbw_gbps). Goal on two NVLink GPUs: >= 0.9x
all_to_all_single's bus bandwidth.

end_to_end cases: routing + dispatch + combine (identity experts) against the Megatron-style reference: softmax +
topk gating, all-gather of the per-expert counts, split sizes copied to the host, argsort by expert +
index_select, all_to_all_single, a stable sort of the received rows by local expert, the inverse on the way back,
index_add of gate-weighted rows. Goal on two NVLink GPUs: >= 1.5x the reference.
"""
from __future__ import annotations

import math
import os
import tempfile
from typing import Callable, List, Optional

import torch
import torch.distributed as dist

import gpuprim
import timing
from gpuprim.distributed import combine, dispatch

OP = "expert_parallel"
SHAPES = [(4096, 7168, 256, 8), (16384, 4096, 64, 2)]  # (tokens per rank, hidden, experts in all, k)
CAPACITY_FACTOR = 1.25


def init_group() -> None:
    """torchrun's environment when present, else a process group of size 1 (file store in a temporary folder)."""
    if dist.is_initialized():
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if "RANK" in os.environ:
        dist.init_process_group(backend)
    else:
        path = os.path.join(tempfile.mkdtemp(), "init")
        dist.init_process_group(backend, init_method=f"file://{path}", rank=0, world_size=1)


def device() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")


def megatron_layer(hidden: torch.Tensor, logits: torch.Tensor, k: int, local: int) -> torch.Tensor:
    """The usual recipe: every split size goes through the host once per layer."""
    world, rank = dist.get_world_size(), dist.get_rank()
    experts = logits.size(1)
    scores = logits.float().softmax(-1)
    gates, ids = scores.topk(k, dim=-1)
    gates = gates / gates.sum(-1, keepdim=True)
    flat = ids.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.bincount(flat, minlength=experts)
    gathered = [torch.empty_like(counts) for _ in range(world)]
    dist.all_gather(gathered, counts)
    every = torch.stack(gathered)  # [W, E]: rows each rank sends to each expert
    mine = every[:, rank * local:(rank + 1) * local]  # [W, L] what this rank receives
    host = torch.cat([every[rank].view(world, local).sum(1), mine.sum(1)]).tolist()  # the host sync
    send, recv = host[:world], host[world:]
    x = hidden.index_select(0, order // k)
    received = x.new_empty(sum(recv), x.size(1))
    dist.all_to_all_single(received, x, recv, send)
    local_ids = torch.repeat_interleave(torch.arange(world * local, device=x.device) % local, mine.reshape(-1),
                                        output_size=sum(recv))
    perm = torch.argsort(local_ids, stable=True)
    grouped = received.index_select(0, perm)  # the experts' input; identity experts
    ungrouped = torch.empty_like(grouped).index_copy_(0, perm, grouped)
    back = x.new_empty(sum(send), x.size(1))
    dist.all_to_all_single(back, ungrouped, send, recv)
    weighted = back * gates.reshape(-1)[order, None].to(back.dtype)
    return torch.zeros_like(hidden).index_add_(0, order // k, weighted)


def slowest(t: dict) -> dict:
    """The slowest rank's timing, so every rank's row is the same."""
    keys = ("median_ms", "min_ms", "p20", "p80")
    values = torch.tensor([t[key] for key in keys], dtype=torch.float64, device=device())
    dist.all_reduce(values, op=dist.ReduceOp.MAX)
    return {**t, **dict(zip(keys, values.tolist()))}


def _measure(case: str, part: str, tokens: int, hidden_size: int, experts: int, k: int) -> List[timing.Row]:
    world = dist.get_world_size()
    if experts % world:
        raise ValueError(f"{experts} experts do not split over {world} ranks")
    local = experts // world
    dev, dtype = device(), torch.bfloat16
    gen = torch.Generator(device=dev).manual_seed(dist.get_rank())
    hidden = torch.randn(tokens, hidden_size, device=dev, dtype=dtype, generator=gen)
    logits = torch.randn(tokens, experts, device=dev, generator=gen)
    capacity = math.ceil(CAPACITY_FACTOR * tokens * k / experts)
    elt = hidden.element_size()
    bytes_moved = 2 * tokens * k * hidden_size * elt
    rows: List[timing.Row] = []
    shape = (tokens, hidden_size, experts, k)

    def add(impl: str, fn: Callable[[], object]) -> None:
        t = slowest(timing.bench(fn))
        seconds = t["median_ms"] * 1e-3
        rows.append(timing.record(OP, case, impl, t, bytes_moved=bytes_moved, shape=shape, dtype=dtype,
                                  world=world, algbw_gbps=bytes_moved / seconds / 1e9,
                                  busbw_gbps=bytes_moved * (world - 1) / world / seconds / 1e9))

    def ours(cap: Optional[int], route: bool) -> Callable[[], object]:
        fixed = gpuprim.moe_route(logits, k, capacity=cap)

        def step() -> torch.Tensor:
            routing = gpuprim.moe_route(logits, k, capacity=cap) if route else fixed
            x, handle = dispatch(hidden, routing, num_local_experts=local, capacity=cap)
            return combine(x, handle, routing.gates)
        return step

    # Correct before timed; loosely, since the reference rounds each gate product and partial sum to bf16.
    torch.testing.assert_close(ours(None, True)().float(), megatron_layer(hidden, logits, k, local).float(),
                               rtol=5e-2, atol=1e-1)
    if part == "exchange":
        add("gpuprim_fixed", ours(capacity, False))
        add("gpuprim_dropless", ours(None, False))
        pairs = math.ceil(tokens * k / world) * world
        a = torch.randn(pairs, hidden_size, device=dev, dtype=dtype, generator=gen)
        b = torch.empty_like(a)

        def both_ways() -> None:
            dist.all_to_all_single(b, a)
            dist.all_to_all_single(a, b)
        add("all_to_all_single", both_ways)
    else:
        add("gpuprim_fixed", ours(capacity, True))
        add("gpuprim_dropless", ours(None, True))
        add("megatron_reference", lambda: megatron_layer(hidden, logits, k, local))
    return rows


def cases(quick: bool) -> List[dict]:
    divisor = timing.size_divisor(quick)
    out = []
    for tokens, hidden_size, experts, k in SHAPES:
        t = max(tokens // divisor, 64)
        for part in ("exchange", "end_to_end"):
            out.append(dict(case=f"{part}_T{t}_H{hidden_size}_E{experts}_k{k}", part=part, tokens=t,
                            hidden_size=hidden_size, experts=experts, k=k))
    return out


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    init_group()
    if dist.get_rank() == 0:
        return timing.run_cases(OP, cases(quick), _measure, out_dir)
    for spec in cases(quick):  # the other ranks take part in every call; rank 0 reports
        timing.run_case(OP, spec["case"], lambda: _measure(**spec))
    return []


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
