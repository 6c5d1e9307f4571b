"""gpuprim MoE routing (moe_route_metadata, moe_route, moe_permute, moe_unpermute) vs the pure-PyTorch reference.

python3 benchmarks/bench_moe.py --out DIR [--quick]

Reference (what a PyTorch user writes): softmax + topk gating; argsort (stable) of the expert ids, bincount and
cumsum for the metadata; index_select to permute; index_add of gate-weighted rows to unpermute. Also
torch.compile'd (dynamic shapes, compiled once) for the forward + backward case.
Shapes from the issue, bf16 hidden states: T16384 H4096 E64 k2; T65536 H2048 E128 k8; T4096 H7168 E256 k8;
T1024 H4096 E512 k8. Bytes: permute reads + writes T*k*H elements; unpermute reads T*k*H and writes T*H; the
metadata moves T*k ids in and (T*k slots + T*k token ids + E counts/offsets) out.
Issue targets: metadata >= 10x the reference's; permute >= 80% of copy bandwidth and route + permute >= 1.4x the
reference route; unpermute >= 5x the reference and >= 75% of copy bandwidth (the copy_same_bytes rows time a device
copy of the same bytes, which for the small shapes is itself well below the large-copy bandwidth; read_input_bytes
times a torch.sum over the bytes unpermute reads, with no writes); forward + backward >= 3x (eager and compiled).
The route_wall rows time the whole route call as a model step pays it, host work included: 200 calls back to back,
CUDA events around each batch of 20 Python calls (timing.wall_time), no L2 flush or sync between calls
(gpuprim.moe_route against the reference's softmax, topk, renormalize, argsort, bincount and cumsum). Targets:
<= 30 us at T1024 E512 k8, >= 10x the reference at every shape. Cases using gpuprim.moe_route need topk_gating's
kernels (an error row without them).
"""
from __future__ import annotations

from typing import List, Optional

import torch

import gpuprim
import timing

OP = "moe"
SHAPES = [  # (tokens, hidden, experts, k)
    (16384, 4096, 64, 2),
    (65536, 2048, 128, 8),
    (4096, 7168, 256, 8),
    (1024, 4096, 512, 8),
]


# ---------------------------------------------------------------- reference
def reference_gating(logits: torch.Tensor, k: int):
    scores = logits.float().softmax(-1)
    gates, expert_ids = scores.topk(k, dim=-1)
    return gates / gates.sum(-1, keepdim=True), expert_ids


def reference_metadata(expert_ids: torch.Tensor, num_experts: int):
    """(counts, offsets [E], slots [T, k], token_ids [T*k]) in the same layout as gpuprim's with pad_to=1."""
    flat = expert_ids.reshape(-1)
    order = torch.argsort(flat, stable=True)  # rows: expert by expert, token order inside
    counts = torch.bincount(flat, minlength=num_experts)
    offsets = torch.cumsum(counts, 0) - counts
    slots = torch.empty_like(order)
    slots[order] = torch.arange(order.numel(), device=order.device)
    return counts, offsets, slots.view_as(expert_ids), order // expert_ids.size(1)


def reference_route(logits: torch.Tensor, k: int):
    gates, expert_ids = reference_gating(logits, k)
    counts, offsets, slots, token_ids = reference_metadata(expert_ids, logits.size(1))
    return gates, expert_ids, counts, offsets, slots, token_ids


def reference_unpermute(expert_out: torch.Tensor, gates: torch.Tensor, slots: torch.Tensor, token_ids: torch.Tensor):
    row_gates = torch.empty(slots.numel(), dtype=gates.dtype, device=gates.device)
    row_gates = row_gates.index_put((slots.reshape(-1),), gates.reshape(-1))
    weighted = expert_out * row_gates.to(expert_out.dtype)[:, None]
    out = torch.zeros(slots.size(0), expert_out.size(1), dtype=expert_out.dtype, device=expert_out.device)
    return out.index_add(0, token_ids, weighted)


def reference_layer(logits: torch.Tensor, hidden: torch.Tensor, k: int):
    """route -> permute -> (identity experts, x2) -> unpermute: the data movement of an MoE layer."""
    gates, _, _, _, slots, token_ids = reference_route(logits, k)
    permuted = hidden.index_select(0, token_ids)
    return reference_unpermute(permuted * 2, gates, slots, token_ids)


_compiled_reference_layer = None


def compiled_reference_layer():
    global _compiled_reference_layer
    if _compiled_reference_layer is None:
        _compiled_reference_layer = torch.compile(reference_layer, dynamic=True)
    return _compiled_reference_layer


def gpuprim_layer(logits: torch.Tensor, hidden: torch.Tensor, k: int):
    routing = gpuprim.moe_route(logits, k)
    return gpuprim.moe_unpermute(gpuprim.moe_permute(hidden, routing) * 2, routing, routing.gates)


def fwd_bwd(layer, logits: torch.Tensor, hidden: torch.Tensor, k: int):
    def step():
        logits.grad, hidden.grad = None, None
        layer(logits, hidden, k).float().sum().backward()
    return step


# ---------------------------------------------------------------- cases
def _inputs(tokens: int, hidden_size: int, experts: int, k: int):
    gen = torch.Generator(device=timing.DEVICE).manual_seed(0)
    logits = torch.randn(tokens, experts, device=timing.DEVICE, generator=gen)
    hidden = torch.randn(tokens, hidden_size, device=timing.DEVICE, generator=gen).to(torch.bfloat16)
    return logits, hidden


def _measure(case: str, part: str, tokens: int, hidden_size: int, experts: int, k: int) -> List[timing.Row]:
    logits, hidden = _inputs(tokens, hidden_size, experts, k)
    gates, expert_ids = reference_gating(logits, k)
    counts, offsets, slots, token_ids = reference_metadata(expert_ids, experts)
    meta = gpuprim.moe_route_metadata(expert_ids, gates, experts)
    for name, ours, ref in (("counts", meta[0], counts), ("offsets", meta[1][:-1], offsets), ("slots", meta[2], slots),
                            ("token_ids", meta[3], token_ids)):
        timing.assert_equal(ours, ref, f"gpuprim.moe_route_metadata {case} {name}")
    routing = gpuprim.Routing(expert_ids, gates, *meta)
    pairs, elt = tokens * k, hidden.element_size()
    common = dict(shape=(tokens, hidden_size, experts, k), dtype=torch.bfloat16, numel=pairs * hidden_size, part=part)
    rows: List[timing.Row] = []

    def add(impl, fn, bytes_moved, bench=timing.bench):
        try:
            rows.append(timing.record(OP, case, impl, bench(fn), bytes_moved=bytes_moved, **common))
        except Exception as error:  # noqa: BLE001 - one impl failing must not hide the others
            rows.append(timing.error_record(OP, case, impl, error))

    def add_copy_anchor(bytes_moved):
        # The same bytes through a device copy of this size: at tens of MiB a copy runs well below the large-copy
        # bandwidth of the % copy column (launch and ramp-up), so this row says how close to a copy we are here.
        src = torch.empty(bytes_moved // 2, dtype=torch.uint8, device=timing.DEVICE)
        dst = torch.empty_like(src)
        add("copy_same_bytes", lambda: dst.copy_(src), bytes_moved)

    if part == "metadata":
        bytes_moved = pairs * 8 * 3 + experts * 16
        add("gpuprim", lambda: gpuprim.moe_route_metadata(expert_ids, gates, experts), bytes_moved)
        add("torch_eager", lambda: reference_metadata(expert_ids, experts), bytes_moved)
    elif part == "permute":
        timing.assert_equal(gpuprim.moe_permute(hidden, routing), hidden.index_select(0, token_ids), f"permute {case}")
        bytes_moved = 2 * pairs * hidden_size * elt
        add("gpuprim", lambda: gpuprim.moe_permute(hidden, routing), bytes_moved)
        add("torch_eager", lambda: hidden.index_select(0, token_ids), bytes_moved)
        add_copy_anchor(bytes_moved)
    elif part == "route_wall":
        routing = gpuprim.moe_route(logits, k)
        ref = reference_route(logits, k)
        for name, ours, expected in (("expert_ids", routing.expert_ids, ref[1]), ("slots", routing.slots, ref[4]),
                                     ("token_ids", routing.token_ids, ref[5])):
            timing.assert_equal(ours, expected, f"gpuprim.moe_route {case} {name}")
        bytes_moved = tokens * experts * logits.element_size() + pairs * 8 * 4 + experts * 16
        add("gpuprim", lambda: gpuprim.moe_route(logits, k), bytes_moved, bench=timing.wall_time)
        add("torch_eager", lambda: reference_route(logits, k), bytes_moved, bench=timing.wall_time)
    elif part == "route_permute":
        bytes_moved = 2 * pairs * hidden_size * elt
        add("gpuprim", lambda: gpuprim.moe_permute(hidden, gpuprim.moe_route(logits, k)), bytes_moved)
        add("torch_eager", lambda: hidden.index_select(0, reference_route(logits, k)[5]), bytes_moved)
    elif part == "unpermute":
        expert_out = gpuprim.moe_permute(hidden, routing)
        ours = gpuprim.moe_unpermute(expert_out, routing, gates)
        # gpuprim rounds once from fp32; compare with the reference computed in fp32 (bf16 index_add rounds often).
        expected = reference_unpermute(expert_out.float(), gates, slots, token_ids)
        torch.testing.assert_close(ours.float(), expected, rtol=1e-2, atol=1e-2)
        del expected
        bytes_moved = (pairs + tokens) * hidden_size * elt
        add("gpuprim", lambda: gpuprim.moe_unpermute(expert_out, routing, gates), bytes_moved)
        add("torch_eager", lambda: reference_unpermute(expert_out, gates, slots, token_ids), bytes_moved)
        add_copy_anchor(bytes_moved)
        # Only the reading half: torch.sum over a buffer of the T*k*H elements' bytes (no writes). At T1024 it
        # takes longer than unpermute's read + write, so unpermute is at the read limit of that size.
        read_bytes = pairs * hidden_size * elt
        src = torch.ones(read_bytes // 4, dtype=torch.float32, device=timing.DEVICE)
        add("read_input_bytes", lambda: src.sum(), read_bytes)
    else:  # forward + backward of route, permute and unpermute
        logits.requires_grad_()
        hidden.requires_grad_()
        # forward: permute (2 T*k*H) + unpermute (T*k*H + T*H); backward: the same again.
        bytes_moved = 2 * (3 * pairs + tokens) * hidden_size * elt
        add("gpuprim", fwd_bwd(gpuprim_layer, logits, hidden, k), bytes_moved)
        add("torch_eager", fwd_bwd(reference_layer, logits, hidden, k), bytes_moved)
        add("torch_compile", fwd_bwd(compiled_reference_layer(), logits, hidden, k), bytes_moved)
    return rows


def cases(quick: bool) -> List[dict]:
    divisor = timing.size_divisor(quick)
    out = []
    for tokens, hidden_size, experts, k in SHAPES:
        t = max(tokens // divisor, 64)
        for part in ("metadata", "route_wall", "permute", "route_permute", "unpermute", "fwd_bwd"):
            out.append(dict(case=f"{part}_T{t}_H{hidden_size}_E{experts}_k{k}", part=part, tokens=t,
                            hidden_size=hidden_size, experts=experts, k=k))
    return out


def run(out_dir: str, cub_bin: Optional[str] = None, quick: bool = False) -> List[timing.Row]:
    return timing.run_cases(OP, cases(quick), _measure, out_dir)


if __name__ == "__main__":
    timing.main(run, __doc__.splitlines()[0])
