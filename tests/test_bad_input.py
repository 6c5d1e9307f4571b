"""Bad input data for every op that takes indices, offsets, lengths or ids: one table (CASES), each row run on
the CPU and on CUDA, in the default mode and in validate mode (gpuprim.set_validate(True)).

Where the error is raised:
- the CPU, and validate mode on either device: at the call (IndexError / ValueError / TypeError as the row says);
- CUDA in the default mode (rows checked on the device): not at the call, which never syncs. The kernel skips the
  bad value and records it; gpuprim.check_errors(), or the next gpuprim call on the device, raises
  gpuprim.InputError (a subclass of IndexError and ValueError) with the same message plus where it was detected.
  Each variant is run both ways ("check_errors" and "next_call").
Every CUDA case then makes a correct call in the same process, which must give the CPU's answer: the CUDA context
stays usable and nothing is left recorded.

Rows whose check the op does not have yet, or whose message names another op than the one called, are
xfail(strict=True) for exactly the variants concerned (TODO below): wiring a check makes its variants pass, and
strict xfail then fails until the mark is removed.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable, Dict

import pytest
import torch

import gpuprim

HAS_CUDA = torch.cuda.is_available()
DEVICES = [d for d in os.environ.get("GPUPRIM_TEST_DEVICES", "cpu,cuda").split(",") if d]

NOT_WIRED = "check not wired yet"
# Variants: "cpu" (CPU, default mode), "validate" (either device, validate mode), "cuda" (CUDA, default mode).
ALL = ("cpu", "validate", "cuda")


@dataclass(frozen=True)
class Case:
    id: str
    op: str  # the public op called
    argument: str
    bad: str  # the bad value, in words
    call: Callable[[str, bool], object]  # call(device, bad): the op on bad data, or (bad=False) on good data
    error: type  # raised at the call (the CPU, validate mode); CUDA's default mode raises gpuprim.InputError
    message: str  # regex the message must match
    on_device: bool = True  # checked by the CUDA kernels (reported after the call); False: an argument check
    todo: Dict[str, str] = field(default_factory=dict)  # variant -> why it is xfail


def todo(*variants: str, reason: str = NOT_WIRED) -> Dict[str, str]:
    return {v: reason for v in variants}


# ---------------------------------------------------------------- the calls (bad=True: the row's bad value)
def index_add(index_bad, index_good, dim=0, inplace=False):
    def call(device, bad):
        x = torch.arange(15.0, device=device).view(5, 3) if dim == 0 else torch.arange(6.0, device=device).view(2, 3)
        index = torch.tensor(index_bad if bad else index_good, device=device)
        source = torch.ones((len(index_good), 3) if dim == 0 else (2, len(index_good)), device=device)
        if inplace:
            return gpuprim.index_add_(x, dim, index, source, alpha=2)
        return gpuprim.index_add(x, dim, index, source, alpha=2)
    return call


def scatter(fn, index_bad, index_good, *args, **kwargs):
    def call(device, bad):
        index = torch.tensor(index_bad if bad else index_good, device=device)
        x = torch.zeros(index.shape[:-1] + (5 if index.dim() == 1 else 3,), device=device)
        src = torch.arange(1.0, index.numel() + 1, device=device).view(index.shape)
        return fn(x, index.dim() - 1, index, src, *args, **kwargs)
    return call


WEIGHT = torch.randn(10, 4, generator=torch.Generator().manual_seed(5))


def embedding_bag(indices_bad, indices_good, offsets_bad=None, offsets_good=None, torch_order=False, **kwargs):
    def call(device, bad):
        weight = WEIGHT.to(device)
        indices = torch.tensor(indices_bad if bad else indices_good, device=device)
        offsets = offsets_bad if bad else offsets_good
        offsets = None if offsets is None else torch.tensor(offsets, device=device)
        if torch_order and bad:  # torch.nn.functional.embedding_bag(input, weight, offsets)
            return gpuprim.embedding_bag(indices, weight, offsets, **kwargs)
        return gpuprim.embedding_bag(weight, indices, offsets, **kwargs)
    return call


SRC = torch.randn(10, 3, generator=torch.Generator().manual_seed(6))


def segment_reduce(offsets_bad, offsets_good=(0, 3, 6, 10), reduce="sum"):
    def call(device, bad):
        return gpuprim.segment_reduce(SRC.to(device), torch.tensor(offsets_bad if bad else offsets_good, device=device),
                                      reduce)
    return call


def segment_reduce_lengths(lengths_bad, lengths_good=(3, 3, 4)):
    def call(device, bad):
        lengths = torch.tensor(lengths_bad if bad else lengths_good, device=device)
        return gpuprim.segment_reduce(SRC.to(device), "sum", lengths=lengths)
    return call


def bincount(x_bad, x_good):
    def call(device, bad):
        return gpuprim.bincount(torch.tensor(x_bad if bad else x_good, device=device), 4, return_overflow=True)
    return call


def histogram(lo, hi):
    def call(device, bad):
        x = torch.linspace(-1, 2, 31, device=device)
        return gpuprim.histogram(x, 4, lo if bad else 0.0, hi if bad else 1.0, return_overflow=True)
    return call


def moe_route_metadata(ids_bad, ids_good=((0, 3), (1, 2), (3, 0))):
    def call(device, bad):
        expert_ids = torch.tensor(ids_bad if bad else ids_good, device=device)
        gates = torch.rand(expert_ids.shape, generator=torch.Generator().manual_seed(7)).to(device)
        return gpuprim.moe_route_metadata(expert_ids, gates, 4)
    return call


def moe_permute(token_ids_bad, token_ids_good=(0, 1, 2, 3, -1)):
    def call(device, bad):
        hidden = torch.arange(8.0, device=device).view(4, 2)
        routing = SimpleNamespace(token_ids=torch.tensor(token_ids_bad if bad else token_ids_good, device=device),
                                  slots=torch.tensor([[0], [1], [2], [3]], device=device))
        return gpuprim.moe_permute(hidden, routing)
    return call


def moe_unpermute(slots_bad, slots_good=((0,), (1,), (-1,), (3,))):
    def call(device, bad):
        expert_out = torch.arange(8.0, device=device).view(4, 2)
        routing = SimpleNamespace(token_ids=torch.tensor([0, 1, 2, 3], device=device),
                                  slots=torch.tensor(slots_bad if bad else slots_good, device=device))
        return gpuprim.moe_unpermute(expert_out, routing)
    return call


def topk(fn, k_bad):
    def call(device, bad):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(8)).to(device)
        return fn(x, k_bad if bad else 2)
    return call


def hash_map_insert(keys_bad, keys_good, capacity):
    def call(device, bad):
        keys = torch.tensor(keys_bad if bad else keys_good, device=device)
        table = gpuprim.HashMap.empty(capacity, device=device)
        table.insert(keys, keys * 10)
        if bad:  # no other gpuprim call: on CUDA the next one would already report the full table
            return table.keys
        return table.find(torch.tensor(keys_good, device=device), -1)
    return call


def graph_op(op, crow_bad, col_bad, crow_good=(0, 2, 3), col_good=(1, 0, 2), sources=None):
    """spmm / csr_transpose / bfs on a 3 x 3 CSR structure."""
    def call(device, bad):
        crow = torch.tensor(crow_bad if bad else crow_good, device=device)
        col = torch.tensor(col_bad if bad else col_good, device=device)
        if op == "spmm":
            return gpuprim.spmm(crow, col, None, torch.arange(6.0, device=device).view(3, 2))
        if op == "csr_transpose":
            return gpuprim.csr_transpose(crow, col, 3)
        with gpuprim.deterministic(True):
            return gpuprim.bfs(crow, col, torch.tensor(sources if bad and sources else [0], device=device))
    return call


# A regex for "gpuprim.<op>: <argument> ... <value>": the form of today's validate-mode messages and of
# common/input_errors.cpp's ("gpuprim.index_add: index[1] = 5 is out of range for dimension 0 of size 5").
def says(op: str, argument: str, value: str) -> str:
    return rf"gpuprim\.{op}: .*?\b{argument}\b.*?(?<![\w.-]){value}(?![\w.])"


CASES = [
    # ---- index_add / index_add_ (index into dim of input)
    Case("index_add-index=size", "index_add", "index", "index == input.size(0)", index_add([0, 5, 1], [0, 4, 1]),
         IndexError, says("index_add", "index", "5")),
    Case("index_add-index=-1", "index_add", "index", "-1", index_add([0, -1, 1], [0, 2, 1]),
         IndexError, says("index_add", "index", "-1")),
    Case("index_add-dim1-index=size", "index_add", "index", "index == input.size(1), dim=1",
         index_add([0, 3], [0, 2], dim=1), IndexError, says("index_add", "index", "3")),
    Case("index_add_-index=size", "index_add_", "index", "index == input.size(0)",
         index_add([0, 5, 1], [0, 4, 1], inplace=True), IndexError, says("index_add_", "index", "5")),
    # ---- scatter_add / scatter_reduce / scatter_reduce_ (index into dim of input)
    Case("scatter_add-index=size", "scatter_add", "index", "index == input.size(0)",
         scatter(gpuprim.scatter_add, [0, 5, 1], [0, 4, 1]), IndexError, says("scatter_add", "index", "5")),
    Case("scatter_add-2d-index=size", "scatter_add", "index", "index == input.size(1), 2-D index",
         scatter(gpuprim.scatter_add, [[0, 3], [1, 1]], [[0, 2], [1, 1]]), IndexError,
         says("scatter_add", "index", "3")),
    Case("scatter_reduce-amax-index=size", "scatter_reduce", "index", "index == input.size(0)",
         scatter(gpuprim.scatter_reduce, [0, 5, 1], [0, 4, 1], "amax"), IndexError,
         says("scatter_reduce", "index", "5")),
    Case("scatter_reduce_-index=-1", "scatter_reduce_", "index", "-1",
         scatter(gpuprim.scatter_reduce_, [0, -1, 1], [0, 3, 1], "mean"), IndexError,
         says("scatter_reduce_", "index", "-1")),
    # ---- embedding_bag (indices into weight's rows; offsets into indices)
    Case("embedding_bag-indices=num_embeddings", "embedding_bag", "indices", "num_embeddings",
         embedding_bag([1, 10, 2], [1, 9, 2], [0, 2], [0, 2]), IndexError, says("embedding_bag", "indices", "10")),
    Case("embedding_bag-indices=-1", "embedding_bag", "indices", "-1",
         embedding_bag([1, -1, 2], [1, 0, 2], [0, 2], [0, 2], mode="sum"), IndexError,
         says("embedding_bag", "indices", "-1")),
    Case("embedding_bag-2d-indices=num_embeddings", "embedding_bag", "indices", "num_embeddings, 2-D indices",
         embedding_bag([[1, 10], [2, 3]], [[1, 9], [2, 3]], mode="max"), IndexError,
         says("embedding_bag", "indices", "10")),
    Case("embedding_bag-offsets-decreasing", "embedding_bag", "offsets", "[0, 3, 1]",
         embedding_bag([1, 2, 3, 4], [1, 2, 3, 4], [0, 3, 1], [0, 1, 3]), ValueError,
         r"gpuprim\.embedding_bag: .*offsets.*non-decreasing"),
    Case("embedding_bag-offsets-not-from-0", "embedding_bag", "offsets", "[1, 3]",
         embedding_bag([1, 2, 3, 4], [1, 2, 3, 4], [1, 3], [0, 3]), ValueError,
         r"gpuprim\.embedding_bag: .*offsets\[0\].*must be 0"),
    Case("embedding_bag-offsets-past-end", "embedding_bag", "offsets", "[0, 5], 4 indices",
         embedding_bag([1, 2, 3, 4], [1, 2, 3, 4], [0, 5], [0, 4]), ValueError,
         says("embedding_bag", "offsets", "5")),
    Case("embedding_bag-include_last_offset-short", "embedding_bag", "offsets", "[0, 2, 3], 4 indices",
         embedding_bag([1, 2, 3, 4], [1, 2, 3, 4], [0, 2, 3], [0, 2, 4], include_last_offset=True), ValueError,
         says("embedding_bag", "offsets", "3")),
    Case("embedding_bag-torch-argument-order", "embedding_bag", "weight", "indices first, as torch's",
         embedding_bag([1, 2, 3, 4], [1, 2, 3, 4], [0, 2], [0, 2], torch_order=True), TypeError,
         r"gpuprim\.embedding_bag: .*(argument order|indices first|weight first)", on_device=False),
    # ---- segment_reduce (offsets into src's dim)
    Case("segment_reduce-offsets-decreasing", "segment_reduce", "offsets", "[0, 5, 3, 10]",
         segment_reduce([0, 5, 3, 10]), ValueError, r"gpuprim\.segment_reduce: .*offsets.*non-decreasing"),
    Case("segment_reduce-lengths-as-offsets", "segment_reduce", "offsets", "lengths [3, 3, 4]",
         segment_reduce([3, 3, 4], [0, 3, 6, 10], "max"), ValueError,
         r"gpuprim\.segment_reduce: .*offsets\[0\].*must be 0"),
    Case("segment_reduce-offsets-short", "segment_reduce", "offsets", "[0, 5, 8], 10 rows",
         segment_reduce([0, 5, 8]), ValueError, says("segment_reduce", "offsets", "8")),
    Case("segment_reduce-offsets-past-end", "segment_reduce", "offsets", "[0, 5, 12], 10 rows",
         segment_reduce([0, 5, 12], reduce="mean"), ValueError, says("segment_reduce", "offsets", "12")),
    # lengths are read where reading them needs no sync (the CPU, validate mode); CUDA's kernels see the offsets
    # made from them, and name the first one that decreases.
    Case("segment_reduce-lengths-negative", "segment_reduce", "lengths", "[3, -1, 8]",
         segment_reduce_lengths([3, -1, 8]), ValueError,
         r"gpuprim\.segment_reduce: (lengths must be non-negative, got lengths\[1\] = -1$|offsets\[2\] = 2 is less)"),
    # ---- graph ops (crow offsets into col, col into dense's rows / the vertices, sources into the vertices)
    Case("spmm-col=cols", "spmm", "col", "3 columns", graph_op("spmm", (0, 2, 3), (1, 3, 2)), IndexError,
         says("spmm", "col", "3")),
    Case("spmm-crow-decreasing", "spmm", "crow", "[0, 2, 1, 3]", graph_op("spmm", (0, 2, 1, 3), (1, 0, 2),
         (0, 2, 2, 3)), ValueError, r"gpuprim\.spmm: .*crow.*non-decreasing"),
    Case("spmm-crow-short", "spmm", "crow", "[0, 2], 3 nonzeros", graph_op("spmm", (0, 2), (1, 0, 2), (0, 3)),
         ValueError, says("spmm", "crow", "2")),
    Case("csr_transpose-col=-1", "csr_transpose", "col", "-1", graph_op("csr_transpose", (0, 2, 3), (1, -1, 2)),
         IndexError, says("csr_transpose", "col", "-1")),
    Case("bfs-sources=V", "bfs", "sources", "V + 2", graph_op("bfs", (0, 2, 3, 3), (1, 0, 2), (0, 2, 3, 3),
         sources=[5]), IndexError, says("bfs", "sources", "5")),
    Case("bfs-col=V", "bfs", "col", "V", graph_op("bfs", (0, 2, 3, 3), (1, 3, 2), (0, 2, 3, 3)), IndexError,
         says("bfs", "col", "3")),
    # ---- histogram (bounds: an argument check at the call, on every device)
    Case("histogram-hi=inf", "histogram", "hi", "inf", histogram(0.0, float("inf")), ValueError,
         r"gpuprim\.histogram: lo and hi must be finite", on_device=False),
    Case("histogram-lo=nan", "histogram", "lo", "nan", histogram(float("nan"), 1.0), ValueError,
         r"gpuprim\.histogram: lo and hi must be finite", on_device=False),
    # ---- MoE routing (expert ids in [0, num_experts); token ids and slots into rows, -1 allowed)
    Case("moe_route_metadata-expert_ids=E", "moe_route_metadata", "expert_ids", "num_experts + 66",
         moe_route_metadata(((0, 3), (1, 70), (3, 0))), IndexError, says("moe_route_metadata", "expert_ids", "70")),
    Case("moe_route_metadata-expert_ids=-1", "moe_route_metadata", "expert_ids", "-1",
         moe_route_metadata(((0, 3), (-1, 2), (3, 0))), IndexError, says("moe_route_metadata", "expert_ids", "-1")),
    Case("moe_permute-token_ids=T", "moe_permute", "token_ids", "T + 5", moe_permute((0, 9, 2, 3, -1)),
         IndexError, says("moe_permute", "token_ids", "9")),
    Case("moe_unpermute-slots=R", "moe_unpermute", "slots", "R + 3", moe_unpermute(((0,), (7,), (-1,), (3,))),
         IndexError, says("moe_unpermute", "slots", "7")),
    Case("moe_unpermute-slots=-2", "moe_unpermute", "slots", "-2", moe_unpermute(((0,), (-2,), (-1,), (3,))),
         IndexError, says("moe_unpermute", "slots", "-2")),
    # ---- HashMap.insert: more distinct keys than the table's capacity (which keys fit on CUDA depends on timing)
    Case("HashMap.insert-table-full", "HashMap.insert", "keys", "5 distinct keys, capacity 4",
         hash_map_insert([1, 2, 3, 4, 5], [1, 2, 3], 4), ValueError,
         r"gpuprim\.HashMap\.insert: keys\[\d\] = \d does not fit: the hash map's table \(capacity 4\) is full"),
    # ---- k: an argument check at the call (today the dispatcher's schema error reaches the user)
    Case("topk-k=2.5", "topk", "k", "2.5", topk(gpuprim.topk, 2.5), TypeError,
         r"gpuprim\.topk: k must be an integer", on_device=False),
    Case("topk_gating-k=2.5", "topk_gating", "k", "2.5", topk(gpuprim.topk_gating, 2.5), TypeError,
         r"gpuprim\.topk_gating: k must be an integer", on_device=False),
]


def variants():
    for case in CASES:
        for device in DEVICES:
            for mode in ("default", "validate"):
                kind = "validate" if mode == "validate" else device
                reports = ("check_errors", "next_call") if kind == "cuda" and case.on_device else ("at_call",)
                for report in reports:
                    marks = [pytest.mark.gpu] if device == "cuda" else []
                    if kind in case.todo:
                        marks.append(pytest.mark.xfail(strict=True, reason=case.todo[kind]))
                    yield pytest.param(case, device, mode, report, marks=marks,
                                       id=f"{case.id}-{device}-{mode}" + ("" if report == "at_call" else f"-{report}"))


def drain_cuda_errors() -> None:
    """Leaves no record behind from an earlier test (a row that failed before its report)."""
    torch.cuda.synchronize()
    try:
        gpuprim.check_errors()
    except gpuprim.InputError:
        pass


def assert_same(got, expected) -> None:
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    for a, b in zip(got, expected):
        torch.testing.assert_close(a.cpu(), b, equal_nan=True)


@pytest.mark.parametrize("case,device,mode,report", list(variants()))
def test_bad_input(case: Case, device: str, mode: str, report: str) -> None:
    if device == "cuda":
        drain_cuda_errors()
    gpuprim.set_validate(mode == "validate")
    if report == "at_call":
        with pytest.raises(case.error, match=case.message):
            case.call(device, True)
    else:
        case.call(device, True)  # returns: the kernel skipped the bad value and recorded it, no sync
        if report == "check_errors":
            with pytest.raises(gpuprim.InputError, match=case.message) as info:
                gpuprim.check_errors()
        else:
            torch.cuda.synchronize()  # the kernel has finished: the next call must see its record
            with pytest.raises(gpuprim.InputError, match=case.message) as info:
                case.call(device, False)
        message = str(info.value)
        assert "(detected on cuda:" in message and "the result of that call is incomplete)" in message, message
    if device == "cuda":  # the context is usable, the error was reported once, a correct call is right
        gpuprim.check_errors()
        assert_same(case.call(device, False), case.call("cpu", False))
        gpuprim.check_errors()


def test_table_covers_every_op_with_indices_offsets_or_ids():
    ops = {case.op for case in CASES}
    assert ops >= {"index_add", "index_add_", "scatter_add", "scatter_reduce", "scatter_reduce_", "embedding_bag",
                   "segment_reduce", "histogram", "moe_route_metadata", "moe_permute", "moe_unpermute",
                   "topk", "topk_gating", "spmm", "csr_transpose", "bfs"}


@pytest.mark.parametrize("device", [pytest.param(d, marks=[pytest.mark.gpu] if d == "cuda" else []) for d in DEVICES])
def test_bincount_counts_values_outside_its_bins(device):
    """bincount's values are data, not indices: those outside [0, num_bins), negative ones included, are counted in
    overflow by design (documented) on every device, and nothing is recorded; validate mode raises instead."""
    x = torch.tensor([0, -1, 2, 7, -5], device=device)
    counts, overflow = gpuprim.bincount(x, 4, return_overflow=True)
    assert counts.tolist() == [1, 0, 1, 0] and overflow.tolist() == [3]
    if device == "cuda":
        gpuprim.check_errors()
    gpuprim.set_validate(True)
    with pytest.raises(ValueError, match=r"gpuprim\.bincount: "):
        gpuprim.bincount(x, 4)


# ---------------------------------------------------------------- the machinery itself
def test_input_error_is_index_and_value_error():
    assert issubclass(gpuprim.InputError, IndexError) and issubclass(gpuprim.InputError, ValueError)
    assert "InputError" in gpuprim.__all__ and "check_errors" in gpuprim.__all__


def test_check_errors_without_cuda_work_does_nothing():
    gpuprim.check_errors()
    torch.ops.gpuprim.check_errors()


def test_ops_checked_on_the_device_translate_its_reports():
    """Every op whose data the CUDA kernels check is wrapped by reports_input_errors, so a later call's report of
    that data is a gpuprim.InputError (a wrapper that lost its decorator would raise a bare IndexError)."""
    from gpuprim._errors import reports_input_errors

    wrapper_code = reports_input_errors(lambda: None).__code__
    for op in sorted({case.op for case in CASES if case.on_device}):
        fn = functools.reduce(getattr, op.split("."), gpuprim)
        assert getattr(fn, "__code__", None) is wrapper_code, f"gpuprim.{op} is not wrapped by reports_input_errors"


def test_wrappers_translate_only_reports_from_the_gpu():
    from gpuprim._errors import reports_input_errors

    @reports_input_errors
    def raises(error):
        raise error

    reported = IndexError("gpuprim.index_add: index[1] = 5 is out of range for dimension 0 of size 5 (detected on "
                          "cuda:0 after the call returned; the result of that call is incomplete)")
    with pytest.raises(gpuprim.InputError, match=r"index\[1\] = 5") as info:
        raises(reported)
    assert info.value.__cause__ is None
    at_call = IndexError("gpuprim.index_add: index must be in [0, 5), got 5")
    with pytest.raises(IndexError) as info:
        raises(at_call)
    assert info.value is at_call
    with pytest.raises(ValueError) as info:
        raises(ValueError("gpuprim.bincount: num_bins must be >= 1, got 0"))
    assert type(info.value) is ValueError


@pytest.mark.gpu
def test_cuda_kernel_records_the_lowest_position_and_reports_once():
    """A test kernel writes the record as the ops' kernels do (prim/util/input_error.cuh): the lowest bad position
    wins across blocks, the report names it, reading clears it, graph replays record, threads report once."""
    launch = _record_test_extension().launch
    n, size = 1 << 22, 5
    good = torch.randint(0, size, (n,), device="cuda")
    bad = good.clone()
    bad[[3_000_000, 1_234_567, 4_000_000]] = torch.tensor([7, -2, 9], device="cuda")
    drain_cuda_errors()

    launch(good, size)
    gpuprim.check_errors()  # nothing bad, nothing raised
    launch(bad, size)
    with pytest.raises(gpuprim.InputError) as info:
        gpuprim.check_errors()
    assert str(info.value) == ("gpuprim.index_add: index[1234567] = -2 is out of range for dimension 0 of size 5 "
                               "(detected on cuda:0 after the call returned; the result of that call is incomplete)")
    gpuprim.check_errors()  # cleared

    everything_bad = torch.full((n,), size, device="cuda")
    launch(everything_bad, size)
    with pytest.raises(gpuprim.InputError, match=r"index\[0\] = 5 "):
        gpuprim.check_errors()

    launch(bad, size)  # the next call on the device reports it (index_add's glue checks first)
    torch.cuda.synchronize()
    x = torch.zeros(5, device="cuda")
    with pytest.raises(gpuprim.InputError, match=r"index\[1234567\] = -2"):
        gpuprim.index_add(x, 0, torch.tensor([1], device="cuda"), torch.ones(1, device="cuda"))
    assert gpuprim.index_add(x, 0, torch.tensor([1], device="cuda"), torch.ones(1, device="cuda")).tolist() == [
        0, 1, 0, 0, 0]

    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        launch(good, size)
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        launch(bad, size)
    gpuprim.check_errors()  # captured, not run
    graph.replay()
    with pytest.raises(gpuprim.InputError, match=r"index\[1234567\] = -2"):
        gpuprim.check_errors()

    launch(bad, size)
    torch.cuda.synchronize()
    raised = []

    def check():
        try:
            gpuprim.check_errors()
        except gpuprim.InputError as error:
            raised.append(error)

    threads = [threading.Thread(target=check) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(raised) == 1


_EXTENSION_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "common/input_errors.h"
#include "prim/util/input_error.cuh"

using namespace gpuprim;

__global__ void check_values(const int64_t* values, int64_t n, InputCheck check) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = values[i];
    if (v < 0 || v >= check.bound) record_input_error(check, i, v);
  }
}

void launch(torch::Tensor values, int64_t size) {
  const c10::cuda::CUDAGuard guard(values.device());
  const InputCheck check{input_error_record(values.device().index()), InputOp::kIndexAdd, InputArg::kIndex,
                         InputRule::kOutOfRange, 0, size, false};
  check_values<<<264, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(values.data_ptr<int64_t>(), values.numel(),
                                                                    check);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""


def _record_test_extension():
    from pathlib import Path

    from torch.utils.cpp_extension import load_inline

    root = Path(__file__).resolve().parents[1]
    lib = Path(gpuprim.__file__).resolve().parent / "lib"
    # The shared libstdc++ torch loads, as CMakeLists.txt links it: a compiler whose lib dir holds only the
    # static one (the H200 machine's) gives an extension that segfaults at its first exception.
    ldd = subprocess.run(["ldd", str(Path(torch.__file__).parent / "lib" / "libc10.so")], capture_output=True,
                         text=True).stdout
    libstdcxx = re.search(r"libstdc\+\+\.so\.6 => (\S+)", ldd)
    link_libstdcxx = ["-Wl,--push-state,--no-as-needed", libstdcxx.group(1), "-Wl,--pop-state"] if libstdcxx else []
    return load_inline(
        name="gpuprim_input_error_test", cpp_sources="void launch(torch::Tensor values, int64_t size);",
        cuda_sources=_EXTENSION_SOURCE, functions=["launch"], extra_include_paths=[str(root / "csrc")],
        extra_ldflags=[f"-L{lib}", "-lgpuprim", f"-Wl,-rpath,{lib}", *link_libstdcxx], verbose=False)
