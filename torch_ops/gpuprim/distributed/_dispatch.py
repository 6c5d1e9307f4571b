"""dispatch and combine: expert-parallel token exchange composed of moe_permute, all_to_all_single, moe_unpermute."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional

import torch
import torch.distributed as dist
from torch import Tensor

from gpuprim.distributed import _checks
from gpuprim.distributed._exchange import all_to_all, exchange_rows
from gpuprim.moe_route import Routing

_permute = torch.ops.gpuprim.moe_permute.default
_unpermute = torch.ops.gpuprim.moe_unpermute.default
_DISPATCH_FIELDS = ("hidden.size(1)", "hidden.dtype", "num_local_experts", "capacity", "pad_to")
_COMBINE_FIELDS = ("expert_output.size(1)",)


@dataclass(frozen=True)
class ExpertHandle:
    """What combine needs to send dispatch's rows back; also the layout of expert_input for the experts.

    offsets [L + 1] (int64, on the device): local expert l's rows are expert_input[offsets[l]:offsets[l + 1]],
    each block padded with zero rows to a multiple of pad_to; rows past offsets[L] are zero padding. counts [L]:
    real (unpadded) rows per local expert. recv_counts [W, L]: rows from each source rank per local expert.
    """

    routing: Routing
    group: Optional[dist.ProcessGroup]
    offsets: Tensor
    counts: Tensor
    recv_counts: Tensor
    recv_slots: Tensor  # [N_recv, 1] row of expert_input of each received row, -1 on padding rows
    send_slots: Tensor  # [T, k] row of the sent buffer of each (token, choice), -1 where dropped
    send_splits: Optional[List[int]]  # rows sent to each rank (None: equal blocks, the fixed-capacity mode)
    recv_splits: Optional[List[int]]
    expert_rows: int  # R_local, the rows of expert_input
    hidden_size: int
    dtype: torch.dtype


def _round_up(x: Tensor, multiple: int) -> Tensor:
    return (x + multiple - 1) // multiple * multiple


def fixed_blocks(routing: Routing, capacity: int) -> tuple[Tensor, Tensor]:
    """(slots [T, k], token_ids [E * capacity]) of moe_route's rows moved into fixed blocks of capacity rows per
    expert, so that the rows for each rank are one equal part of the buffer (moe_route packs its blocks)."""
    slots: Tensor = routing.slots
    experts: Tensor = routing.expert_ids.long()
    offsets: Tensor = routing.offsets
    kept = slots >= 0
    fixed = torch.where(kept, experts * capacity + slots - offsets[experts], -1)
    rows = routing.counts.numel() * capacity
    pair = torch.arange(slots.numel(), device=slots.device)
    token_ids = torch.full((rows + slots.numel(),), -1, dtype=torch.int64, device=slots.device)
    # Each pair writes its own entry (dropped pairs a private one past rows): no duplicate indices.
    token_ids.scatter_(0, torch.where(kept, fixed, rows + pair.view_as(fixed)).reshape(-1), pair // slots.size(1))
    return fixed, token_ids[:rows]


def start_host_read(values: Tensor) -> Callable[[], List[int]]:
    """Starts copying values to the host; the returned function waits for that copy alone and gives the list.

    On CUDA the copy goes to pinned memory behind an event, so work queued after this call keeps the GPU busy
    while the host waits for the values.
    """
    if values.device.type != "cuda":
        return values.tolist
    host = torch.empty(values.shape, dtype=values.dtype, pin_memory=True)
    host.copy_(values, non_blocking=True)
    copied = torch.cuda.Event()
    copied.record()

    def read() -> List[int]:
        copied.synchronize()
        result: List[int] = host.tolist()
        return result
    return read


def receive_layout(recv_counts: Tensor, block: Optional[int], received: int, out_rows: int,
                   pad_to: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(recv_slots [N, 1], token_ids [out_rows], offsets [L + 1], counts [L]) of the received rows, on the device.

    Received rows come source rank by source rank, local expert by local expert inside ([W, L] segments, each of
    `block` rows in the fixed-capacity mode, recv_counts[w, l] rows when dropless). expert_input is grouped by
    local expert, source ranks in order inside, so it equals one process routing all ranks' tokens in rank order.
    """
    world, local = recv_counts.shape
    device = recv_counts.device
    flat = recv_counts.reshape(-1)
    if block is not None:
        starts = torch.arange(world * local, device=device) * block
    else:
        starts = torch.cumsum(flat, 0) - flat
    row = torch.arange(received, device=device)
    segment = torch.searchsorted(starts, row, right=True) - 1  # the last segment starting at or before the row
    within = row - starts[segment]
    valid = within < flat[segment]
    counts = recv_counts.sum(0)
    padded = _round_up(counts, pad_to)
    ends = torch.cumsum(padded, 0)
    offsets = torch.cat([ends.new_zeros(1), ends])
    before = (torch.cumsum(recv_counts, 0) - recv_counts).reshape(-1)  # rows from lower source ranks, per expert
    dest = offsets[segment % local] + before[segment] + within
    recv_slots = torch.where(valid, dest, -1)
    # Every received row writes its own entry (padding rows a private one past out_rows): no duplicate indices.
    token_ids = torch.full((out_rows + received,), -1, dtype=torch.int64, device=device)
    token_ids.scatter_(0, torch.where(valid, dest, out_rows + row), row)
    return recv_slots.unsqueeze(1), token_ids[:out_rows], offsets, counts


def dispatch(hidden: Tensor, routing: Routing, group: Optional[dist.ProcessGroup] = None, *, num_local_experts: int,
             capacity: Optional[int] = None, pad_to: int = 1) -> tuple[Tensor, ExpertHandle]:
    """Sends each rank's routed tokens to the ranks that own their experts.

    Args:
        hidden: [T, H] fp16/bf16/fp32/fp64 token states of this rank (T may differ between ranks, and be 0).
        routing: this rank's ``gpuprim.moe_route(logits, k, capacity=capacity, pad_to=1)`` over all E global
            experts (expert e lives on rank e // num_local_experts).
        group: the expert-parallel process group (None: the default group); NCCL on GPUs, gloo on CPUs.
        num_local_experts: L = E / group size experts per rank.
        capacity: None: dropless, exact sizes, one host sync (the split sizes). An int: the fixed-capacity mode,
            at most ``capacity`` rows per (source rank, expert), the rest dropped by moe_route; every size follows
            from the arguments, so nothing waits for the GPU and a CUDA graph can capture it.
        pad_to: each local expert's block of expert_input is padded with zero rows to a multiple of this.

    Returns:
        (expert_input [R_local, H], handle): rows grouped by local expert (source ranks in order, each source's
        tokens in order), ``handle.offsets`` [L + 1] on the device for a grouped GEMM. R_local is
        L * round_up(W * capacity, pad_to) with a capacity, the exact padded total when dropless.

    Differentiable in hidden (the backward is the reverse exchange). Argument checks raise on every rank (see
    gpuprim/distributed/_checks.py); in the fixed-capacity mode they compare ranks on the first call per group
    and in validate mode, with one host read.
    """
    _checks.check_scalars(num_local_experts, capacity, pad_to)
    if capacity is None and _checks.capturing():
        raise RuntimeError("gpuprim.distributed.dispatch: the dropless mode (capacity=None) reads its split sizes on "
                           "the host, which a CUDA graph cannot capture; pass a capacity")
    world = dist.get_world_size(group)
    device = _checks.comm_device(group, hidden.device if isinstance(hidden, Tensor) else torch.device("cpu"))
    problem = _checks.dispatch_problem(hidden, routing, world, num_local_experts, capacity, device)
    agreeing = _checks.should_agree("dispatch", group, always=capacity is None)
    if problem is not None and not agreeing:
        _checks.fail(problem)
    local = num_local_experts
    fields = [hidden.size(1) if problem is None else -1, _checks.dtype_code(hidden), local,
              -1 if capacity is None else capacity, pad_to]
    head = _checks.header_tensor(problem, fields, device, agreeing)
    # A rank with bad input still takes part in the exchange (zero counts), then raises with every other rank.
    counts = routing.counts if problem is None else torch.zeros(world * local, dtype=torch.int64, device=device)
    # One exchange carries the check header and the counts: per destination [header, counts of its L experts].
    meta = torch.cat([head.expand(world, -1), counts.view(world, local)], 1)
    meta = exchange_rows(meta, None, None, group)
    recv_counts = meta[:, head.numel():].contiguous()
    send_splits = recv_splits = None
    if agreeing:
        # The one host read: headers, and when dropless the split sizes (rows to and from each rank).
        extra = [counts.view(world, local).sum(1), recv_counts.sum(1), recv_counts.reshape(-1)] \
            if capacity is None else []
        read = start_host_read(torch.cat([meta[:, :head.numel()].reshape(-1), *extra]))
    if problem is None:  # queued before the host read completes, so the GPU gathers while the CPU waits
        if capacity is not None:
            send_slots, send_token_ids = fixed_blocks(routing, capacity)
        else:
            send_slots, send_token_ids = routing.slots, routing.token_ids
        permuted = _permute(hidden, send_token_ids, send_slots)
    if agreeing:
        host = read()
        size = head.numel()
        headers = [host[r * size:(r + 1) * size] for r in range(world)]
        _checks.agree("dispatch", problem, headers, _DISPATCH_FIELDS)
        if capacity is None:
            rest = host[world * size:]
            send_splits, recv_splits, per_source = rest[:world], rest[world:2 * world], rest[2 * world:]
    if capacity is not None:
        received = world * local * capacity
        out_rows = local * ((world * capacity + pad_to - 1) // pad_to * pad_to)
        recv = all_to_all(permuted, None, None, group)
    else:
        assert send_splits is not None and recv_splits is not None
        received = sum(recv_splits)
        per_expert = [sum(per_source[w * local + e] for w in range(world)) for e in range(local)]
        out_rows = sum((n + pad_to - 1) // pad_to * pad_to for n in per_expert)
        recv = all_to_all(permuted[:sum(send_splits)], recv_splits, send_splits, group)
    recv_slots, token_ids, offsets, expert_counts = receive_layout(recv_counts, capacity, received, out_rows, pad_to)
    expert_input = _permute(recv, token_ids, recv_slots)
    handle = ExpertHandle(routing, group, offsets, expert_counts, recv_counts, recv_slots, send_slots, send_splits,
                          recv_splits, out_rows, hidden.size(1), hidden.dtype)
    return expert_input, handle


def combine(expert_output: Tensor, handle: ExpertHandle, gates: Optional[Tensor] = None) -> Tensor:
    """[T, H]: each token's expert outputs, back on its rank, summed with its gates.

    ``out[t] = sum_j gates[t, j] * expert_output_of(t, j)`` in the order j = 0..k-1, accumulated in fp32 (fp64
    for fp64) as :func:`gpuprim.moe_unpermute` does; dropped choices add nothing; gates None: weight 1. Bitwise
    deterministic for the same ranks and inputs. expert_output is [R_local, H] like dispatch's expert_input (rows
    past the blocks' real rows are ignored). Differentiable in expert_output and gates (the backward is the
    forward exchange); with gates = routing.gates the gradient reaches the router logits through moe_route.
    """
    if not isinstance(handle, ExpertHandle):
        raise TypeError(f"gpuprim.distributed.combine: handle must be dispatch's ExpertHandle, got "
                        f"{type(handle).__name__}")
    slots: Tensor = handle.routing.slots
    problem = _checks.combine_problem(expert_output, gates, handle.expert_rows, handle.hidden_size, handle.dtype,
                                      slots)
    if _checks.should_agree("combine", handle.group, always=False):
        device = handle.recv_counts.device
        head = _checks.header_tensor(problem, [handle.hidden_size], device, True)
        world = handle.recv_counts.size(0)
        rows = exchange_rows(head.expand(world, -1).contiguous(), None, None, handle.group).tolist()
        _checks.agree("combine", problem, rows, _COMBINE_FIELDS)
    elif problem is not None:
        _checks.fail(problem)
    back = _unpermute(expert_output, handle.recv_slots, None)  # received rows in order, padding rows zero
    sent = all_to_all(back, handle.send_splits, handle.recv_splits, handle.group)
    rows_routed = handle.routing.token_ids.numel() if handle.send_splits is not None else sent.size(0)
    if sent.size(0) < rows_routed:  # dropless rows past offsets[E] (ids no expert owns) were not sent
        sent = torch.cat([sent, sent.new_zeros(rows_routed - sent.size(0), sent.size(1))])
    return _unpermute(sent, handle.send_slots, gates)


__all__ = ["ExpertHandle", "combine", "dispatch"]
