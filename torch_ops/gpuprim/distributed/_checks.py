"""Argument checks of dispatch and combine that end the same way on every rank.

A check that fails on one rank only (a hidden of the wrong shape, a routing from another call) must not leave the
other ranks waiting in a collective. So a rank's verdict travels in a small header with the count exchange, every
rank reads all headers, and all of them raise: the rank with the bad argument its own message, the others one
naming the rank and the argument. Reading the headers is a host sync, so it happens where one is paid anyway
(dropless dispatch) or once: on the first call per process group, and on every call in validate mode.
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, NoReturn, Optional, Sequence

import torch
import torch.distributed as dist
from torch import Tensor

from gpuprim._validate import is_validating

ARGUMENTS = ("hidden", "routing", "num_local_experts", "group", "expert_output", "gates", "handle")
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_checked: set = set()


class Problem(NamedTuple):
    """A bad argument found on this rank: its name (one of ARGUMENTS) and the full message."""

    argument: str
    message: str
    kind: type = ValueError


def fail(problem: Problem) -> NoReturn:
    raise problem.kind(problem.message)


def dtype_code(x: object) -> int:
    return DTYPES.index(x.dtype) if isinstance(x, Tensor) and x.dtype in DTYPES else -1


def comm_device(group: Optional[dist.ProcessGroup], fallback: torch.device) -> torch.device:
    """Where the group's collectives take tensors: the current GPU for NCCL, the CPU for gloo."""
    backend = str(dist.get_backend(group))
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    if backend == "gloo":
        return torch.device("cpu")
    return fallback


def capturing() -> bool:
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def should_agree(op: str, group: Optional[dist.ProcessGroup], always: bool) -> bool:
    """Whether this call exchanges and reads the check headers (the same answer on every rank)."""
    if capturing():
        return False  # no host reads inside a CUDA graph; the warm-up call before the capture checked
    key = (op, id(group if group is not None else dist.group.WORLD))
    first = key not in _checked
    _checked.add(key)
    return always or first or is_validating()


def header(problem: Optional[Problem], fields: Sequence[int]) -> List[int]:
    return [0 if problem is None else 1 + ARGUMENTS.index(problem.argument), *fields]


def header_tensor(problem: Optional[Problem], fields: Sequence[int], device: torch.device, read: bool) -> Tensor:
    """The header on the device; zeros when no rank reads it (no host copy, so nothing waits or breaks a capture)."""
    values = header(problem, fields)
    if not read:
        return torch.zeros(len(values), dtype=torch.int64, device=device)
    host = torch.tensor(values, dtype=torch.int64)
    if device.type == "cuda":
        host = host.pin_memory()  # a pinned source makes the copy asynchronous: the one sync stays the read-back
    return host.to(device, non_blocking=True)


def agree(op: str, problem: Optional[Problem], headers: List[List[int]], names: Sequence[str]) -> None:
    """Raises on every rank when any rank's header reports a problem or the ranks disagree on a field.

    headers[r] = [problem code, *fields] of rank r; names[i] names field i in messages.
    """
    if problem is not None:
        fail(problem)
    for source, row in enumerate(headers):
        if row[0] != 0:
            raise ValueError(f"gpuprim.distributed.{op}: rank {source} got a bad {ARGUMENTS[row[0] - 1]} "
                             "(that rank raised the details); every rank stops here so none waits in a collective")
    for i, name in enumerate(names):
        values = [row[1 + i] for row in headers]
        for source, value in enumerate(values):
            if value != values[0]:
                raise ValueError(f"gpuprim.distributed.{op}: {name} must be the same on every rank, got "
                                 f"{values[0]} on rank 0 and {value} on rank {source}")


def check_scalars(num_local_experts: object, capacity: object, pad_to: object) -> None:
    """Arguments every rank passes alike: raising at once raises on every rank."""
    for name, value, low in (("num_local_experts", num_local_experts, 1), ("capacity", capacity, 0),
                             ("pad_to", pad_to, 1)):
        if name == "capacity" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"gpuprim.distributed.dispatch: {name} must be an integer, got {value!r}")
        if value < low:
            raise ValueError(f"gpuprim.distributed.dispatch: {name} must be >= {low}, got {value}")


def dispatch_problem(hidden: object, routing: Any, world: int, num_local_experts: int, capacity: Optional[int],
                     device: torch.device) -> Optional[Problem]:
    """The first bad argument of dispatch on this rank, or None."""
    op = "gpuprim.distributed.dispatch"
    if not isinstance(hidden, Tensor) or hidden.dim() != 2 or hidden.dtype not in DTYPES:
        shape = tuple(hidden.shape) if isinstance(hidden, Tensor) else type(hidden).__name__
        dtype = hidden.dtype if isinstance(hidden, Tensor) else None
        return Problem("hidden", f"{op}: hidden must be a 2-D [T, H] fp16/bf16/fp32/fp64 tensor, got {shape} {dtype}")
    if hidden.device != device:
        return Problem("hidden", f"{op}: hidden must be on {device} (the process group's device), got {hidden.device}")
    fields = ("expert_ids", "gates", "counts", "offsets", "slots", "token_ids", "num_dropped")
    if not all(isinstance(getattr(routing, f, None), Tensor) for f in fields):
        return Problem("routing", f"{op}: routing must be a gpuprim.Routing, got {type(routing).__name__}", TypeError)
    devices = {getattr(routing, f).device for f in fields}
    if devices != {hidden.device}:
        return Problem("routing", f"{op}: routing must be on hidden's device {hidden.device}, got "
                                  f"{sorted(map(str, devices))}")
    slots: Tensor = routing.slots
    experts = routing.counts.numel()
    if slots.dim() != 2 or slots.size(0) != hidden.size(0):
        return Problem("routing", f"{op}: routing must come from moe_route of this hidden's {hidden.size(0)} tokens "
                                  f"(routing.slots must be [T, k] with T = {hidden.size(0)}), got {tuple(slots.shape)}")
    if experts % world != 0:
        return Problem("group", f"{op}: the group size {world} must divide routing's number of experts, got {experts}")
    if experts != num_local_experts * world:
        return Problem("num_local_experts", f"{op}: num_local_experts must be routing's experts / group size = "
                                            f"{experts // world}, got {num_local_experts}")
    rows = routing.token_ids.numel()
    if capacity is not None and rows != experts * capacity:
        return Problem("routing", f"{op}: routing must come from moe_route(..., capacity={capacity}, pad_to=1) "
                                  f"({experts * capacity} rows), got {rows} rows")
    if capacity is None and rows != slots.numel():
        return Problem("routing", f"{op}: without a capacity, routing must come from moe_route(..., capacity=None, "
                                  f"pad_to=1) ({slots.numel()} rows), got {rows} rows")
    return None


def combine_problem(expert_output: object, gates: object, rows: int, hidden_size: int, dtype: torch.dtype,
                    slots: Tensor) -> Optional[Problem]:
    """The first bad argument of combine on this rank, or None."""
    op = "gpuprim.distributed.combine"
    if (not isinstance(expert_output, Tensor) or tuple(expert_output.shape) != (rows, hidden_size)
            or expert_output.dtype != dtype or expert_output.device != slots.device):
        got = (tuple(expert_output.shape), expert_output.dtype, str(expert_output.device)) \
            if isinstance(expert_output, Tensor) else type(expert_output).__name__
        return Problem("expert_output", f"{op}: expert_output must be a [{rows}, {hidden_size}] {dtype} tensor on "
                                        f"{slots.device} like dispatch's expert_input, got {got}")
    if gates is not None and (not isinstance(gates, Tensor) or tuple(gates.shape) != tuple(slots.shape)
                              or not gates.is_floating_point() or gates.device != slots.device):
        got = (tuple(gates.shape), gates.dtype, str(gates.device)) if isinstance(gates, Tensor) \
            else type(gates).__name__
        return Problem("gates", f"{op}: gates must be None or a floating [T, k] = {list(slots.shape)} tensor on "
                                f"{slots.device}, got {got}")
    return None
