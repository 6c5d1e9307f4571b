"""Checks shared by every op's tests: opcheck, torch.compile, bitwise determinism, no host sync."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

import pytest
import torch


def run_opcheck(op, args: Sequence, kwargs: dict | None = None) -> None:
    """torch.library.opcheck: schema, fake tensor, autograd registration and AOT dispatch tests.

    Note (DESIGN.md): the autograd-registration test silently skips unless an input requires
    grad, so differentiable ops must also be checked with requires_grad samples.
    """
    torch.library.opcheck(op, tuple(args), kwargs or {})


def opcheck_sample_ok(x: torch.Tensor) -> bool:
    """opcheck compares eager and AOT outputs with NaN != NaN, so NaN-producing samples are left to
    the value tests (which compare NaN positions exactly); they exercise no other dispatch path."""
    return not (x.is_floating_point() and bool(torch.isnan(x).any() or torch.isinf(x).any()))


def assert_bitwise_equal(a: torch.Tensor, b: torch.Tensor, what: str = "", nan_payload: bool = True) -> None:
    """Same dtype, shape and bits (NaNs with the same payload compare equal, -0.0 != +0.0). nan_payload=False:
    NaNs must sit at the same places, their sign and payload may differ (x86 and CUDA make different NaNs)."""
    assert a.dtype == b.dtype and a.shape == b.shape, f"{what}: {a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}"
    if a.dtype.is_floating_point and not nan_payload:
        a, b = a.cpu(), b.cpu()
        assert torch.equal(a.isnan(), b.isnan()), f"{what}: NaNs differ in place"
        a, b = a.masked_fill(a.isnan(), float("nan")), b.masked_fill(b.isnan(), float("nan"))
    if a.dtype.is_floating_point:
        width = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        a, b = a.contiguous().view(width), b.contiguous().view(width)
    assert torch.equal(a.cpu(), b.cpu()), f"{what}: results differ bitwise"


def assert_deterministic(fn: Callable[[], object], runs: int = 3) -> None:
    """Calls fn `runs` times and checks every tensor output is bitwise identical each time."""
    first = _as_list(fn())
    for _ in range(runs - 1):
        for i, (a, b) in enumerate(zip(first, _as_list(fn()))):
            assert_bitwise_equal(a, b, f"output {i}")


def check_compiles(fn: Callable, *args, dynamic: bool | None = None, backend: str = "aot_eager") -> None:
    """torch.compile(fullgraph=True) traces fn without graph breaks and gives eager's result.

    aot_eager exercises tracing, fake kernels and AOT dispatch cheaply; pass backend="inductor"
    for the full compiler (slower: it builds C++ or Triton code).
    """
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, dynamic=dynamic, backend=backend)
    for a, b in zip(_as_list(fn(*args)), _as_list(compiled(*args))):
        torch.testing.assert_close(a, b, equal_nan=True, rtol=0, atol=0)


def check_compiled_backward(step: Callable, x: torch.Tensor, *rest, dynamic: bool | None = None,
                            loss_atol: float | None = None) -> None:
    """torch.compile(fullgraph=True) with inductor of a scalar loss step(x, *rest): the loss and
    d loss / d x match eager (the op's backward is traced through its registered ops). loss_atol: the
    bound on the loss's rounding difference where inductor may sum its terms in another order."""
    torch._dynamo.reset()
    loss = torch.compile(step, fullgraph=True, dynamic=dynamic)(x, *rest)
    (grad,) = torch.autograd.grad(loss, x)
    x_eager = x.detach().clone().requires_grad_()
    loss_eager = step(x_eager, *rest)
    (grad_eager,) = torch.autograd.grad(loss_eager, x_eager)
    if loss_atol is None:
        torch.testing.assert_close(loss, loss_eager)
    else:
        torch.testing.assert_close(loss, loss_eager, rtol=0, atol=loss_atol)
    torch.testing.assert_close(grad, grad_eager)


def check_no_sync_and_graph_capture(fn: Callable[[], object], replays: int = 1) -> None:
    """CUDA only: fn runs under sync-debug 'error' and replays from a CUDA graph with the same result.

    replays > 1: the graph replays that many times, its outputs cleared before each (floats to 0, others
    to -1), so that state the captured work must reset itself (counters in a workspace) is checked too.
    """
    eager = _as_list(fn())
    torch.cuda.synchronize()
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        fn()
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # warm-up on a side stream, as graph capture requires
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = _as_list(fn())
    for replay in range(replays):
        if replay > 0:
            for t in captured:
                t.fill_(0 if t.is_floating_point() else -1)
        graph.replay()
        torch.cuda.synchronize()
        for a, b in zip(eager, captured):
            torch.testing.assert_close(a, b, equal_nan=True, rtol=0, atol=0)


def check_no_grad_fast_path(fn: Callable[[torch.Tensor], object], x: torch.Tensor) -> None:
    """An op whose Autograd kernel skips the autograd node when nothing needs one: the same values with and
    without a gradient to record, no grad_fn without one, and a forward-mode tangent is refused (the autograd
    Function has no jvp), never silently dropped."""
    import torch.autograd.forward_ad as fwAD

    plain = _as_list(fn(x))
    with torch.no_grad():
        no_grad = _as_list(fn(x.clone().requires_grad_(x.is_floating_point())))
    tracked = _as_list(fn(x.clone().requires_grad_()))
    for a, b, c in zip(plain, no_grad, tracked):
        assert a.grad_fn is None and b.grad_fn is None, "a call with nothing to differentiate recorded a node"
        torch.testing.assert_close(a, b, equal_nan=True, rtol=0, atol=0)
        torch.testing.assert_close(a, c.detach(), equal_nan=True, rtol=0, atol=0)
    assert tracked[0].grad_fn is not None, "the differentiable output of a tracked call has no grad_fn"
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, torch.ones_like(x))
        with pytest.raises(RuntimeError, match="jvp is not implemented"):
            fn(dual)


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def run_example(script: str, *args: str, timeout: int = 300) -> str:
    """examples/<script> with these arguments in a fresh process (this tree's gpuprim on its path); its own asserts
    are the check: it must exit 0. Returns what it printed."""
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "torch_ops"), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, str(root / "examples" / script), *args], capture_output=True, text=True,
                            env=env, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout
