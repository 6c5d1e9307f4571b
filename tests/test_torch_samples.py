"""PyTorch's own OpInfo samples (torch.testing._internal's op_db) for the torch ops gpuprim mirrors, run
through gpuprim and compared with torch: outputs, and float64 gradients with the same grad_output.

16-bit inputs of the ops that compute in fp32 are compared with torch's op on the float64 values (rounded
to the dtype): gpuprim rounds once where torch rounds along the way. Each sample is matched, or refused
for a reason listed in REFUSALS (complex dtypes, and the differences README's "Drop-in parity with torch"
section documents). Anything else (a mismatch, or an error that is not a listed refusal) fails. The
per-op report (tried / matched / refused) is printed (pytest -s).
"""
from __future__ import annotations

import collections
from typing import Any, Callable, Dict

import pytest
import torch

import gpuprim

# The documented refusals: key -> reason (README, "Drop-in parity with torch").
REFUSALS = {
    "complex": "complex dtypes are not supported",
    "dtype": "a dtype gpuprim's op does not take (README lists each op's dtypes)",
    "histc_range": "histogram needs lo < hi (torch.histc's min == max takes the range from the data: a sync)",
    "histc_last_edge": "histogram's last bin is half-open: a value equal to max is dropped (torch.histc counts it)",
}
DTYPES = [torch.float64, torch.float32, torch.float16, torch.int64, torch.int32, torch.uint8, torch.bool,
          torch.complex64]


class Refused(Exception):
    pass


def refuse(key: str):
    raise Refused(key)


def _pos(args: tuple, kw: dict, i: int, name: str, default: Any = None) -> Any:
    return args[i] if len(args) > i else kw.get(name, default)


# ---------------------------------------------------------------- adapters: (x, args, kwargs) -> gpuprim's output
def run_sum(x, args, kw, op=gpuprim.sum):
    return op(x, _pos(args, kw, 0, "dim"), _pos(args, kw, 1, "keepdim", False), dtype=kw.get("dtype"))


def run_cumsum(x, args, kw):
    return gpuprim.cumsum(x, _pos(args, kw, 0, "dim"), dtype=kw.get("dtype"))


def run_segment_reduce(x, args, kw):
    return gpuprim.segment_reduce(x, *args, **kw)


def run_topk(x, args, kw):
    return gpuprim.topk(x, *args, **kw)


def run_sort(x, args, kw):
    dim, descending = _pos(args, kw, 0, "dim", -1), _pos(args, kw, 1, "descending", False)
    return gpuprim.sort(x, dim, descending, stable=bool(kw.get("stable", False)))


def run_bincount(x, args, kw):
    num_bins = max(int(kw.get("minlength", 0)), int(x.max()) + 1 if x.numel() else 0)
    return gpuprim.bincount(x, num_bins, kw.get("weights"))


def run_histc(x, args, kw):
    bins, lo, hi = int(kw.get("bins", 100)), float(kw.get("min", 0)), float(kw.get("max", 0))
    if lo >= hi:
        refuse("histc_range")
    if bool((x == hi).any()):
        refuse("histc_last_edge")
    return gpuprim.histogram(x, bins, lo, hi).to(x.dtype)


def run_unique_consecutive(x, args, kw):
    dim = kw.get("dim")
    if dim is None:
        unique, counts, num_runs, inverse = gpuprim.run_length_encode(x.reshape(-1), return_inverse=True)
        inverse = inverse.view(x.shape)
    else:
        unique, counts, num_runs, inverse = gpuprim.run_length_encode(x, dim=dim, return_inverse=True)
    r = int(num_runs)
    out = [unique.narrow(0 if dim is None else dim, 0, r)] + ([inverse] if kw.get("return_inverse") else []) + (
        [counts[:r]] if kw.get("return_counts") else [])
    return out[0] if len(out) == 1 else tuple(out)


def run_embedding_bag(weight, args, kw):
    return gpuprim.embedding_bag(weight, args[0], **kw)  # max_norm renorms weight in place, as torch


ADAPTERS: Dict[str, Callable] = {
    "sum": run_sum,
    "mean": lambda x, a, k: run_sum(x, a, k, gpuprim.mean),
    "masked_select": lambda x, a, k: gpuprim.masked_select(x, a[0]),
    "cumsum": run_cumsum,
    "index_add": lambda x, a, k: gpuprim.index_add(x, *a, **k),
    "scatter_add": lambda x, a, k: gpuprim.scatter_add(x, *a, **k),
    "scatter_reduce": lambda x, a, k: gpuprim.scatter_reduce(x, *a, **k),
    "_segment_reduce": run_segment_reduce,
    "topk": run_topk,
    "sort": run_sort,
    "bincount": run_bincount,
    "histc": run_histc,
    "unique_consecutive": run_unique_consecutive,
    "nn.functional.embedding_bag": run_embedding_bag,
}
# Ops whose dtypes gpuprim takes are fewer than torch's (the rest are refused as "dtype").
GPUPRIM_DTYPES = {
    "mean": {torch.float64, torch.float32, torch.float16, torch.bfloat16},
    "_segment_reduce": {torch.float64, torch.float32, torch.float16, torch.bfloat16},
    "topk": set(DTYPES) - {torch.bool, torch.complex64},
}


# gpuprim computes 16-bit inputs in fp32 (fp64 for histogram's bins) and rounds once, where torch rounds
# to 16 bits along the way: there the reference is torch's op on float64 values, rounded to the dtype.
WIDE_ARITHMETIC = {"sum", "mean", "cumsum", "index_add", "scatter_add", "scatter_reduce", "_segment_reduce",
                   "nn.functional.embedding_bag", "histc"}


def wide_reference(info, x, args, kw, dtype):
    def wide(t):  # a dtype= argument too, so that the reference is computed in float64 and rounded once
        if isinstance(t, torch.dtype):
            return torch.float64 if t == dtype else t
        return t.double() if torch.is_tensor(t) and t.dtype == dtype else t
    out = info.op(wide(x), *(wide(a) for a in args), **{k: wide(v) for k, v in kw.items()})
    if torch.is_tensor(out):
        return out.to(dtype) if out.dtype == torch.float64 else out
    return tuple(t.to(dtype) if torch.is_tensor(t) and t.dtype == torch.float64 else t for t in out)


def op_infos():
    common = pytest.importorskip("torch.testing._internal.common_methods_invocations")
    return [op for op in common.op_db if op.name in ADAPTERS]


# ---------------------------------------------------------------- comparison
def tensors(out) -> list:
    return [out] if torch.is_tensor(out) else [t for t in out if torch.is_tensor(t)]


def compare(name: str, ours, theirs, x, args, kw, **tol) -> None:
    if name in ("topk", "sort"):  # values equal; the indices point at those values (ties may order differently)
        dim = _pos(args, kw, 1 if name == "topk" else 0, "dim", -1)
        values, indices = ours
        if name == "topk" and not _pos(args, kw, 3, "sorted", True):  # unsorted: the same set
            values, theirs_values = values.sort(dim)[0], theirs[0].sort(dim)[0]
        else:
            theirs_values = theirs[0]
        torch.testing.assert_close(values, theirs_values, equal_nan=True, rtol=0, atol=0)
        if x.dim() > 0:
            torch.testing.assert_close(x.gather(dim, indices), ours[0], equal_nan=True, rtol=0, atol=0)
        if name == "sort" and kw.get("stable"):
            assert torch.equal(indices, theirs[1])
        return
    ours_list, theirs_list = tensors(ours), tensors(theirs)
    assert len(ours_list) == len(theirs_list)
    for a, b in zip(ours_list, theirs_list):
        if a.is_sparse:
            a = a.to_dense()
        if b.is_sparse:
            b = b.to_dense()
        # bincount of float weights: torch gives float64 whatever the weights' dtype.
        torch.testing.assert_close(a, b, equal_nan=True, check_dtype=name != "bincount", check_device=True, **tol)


def leaves(x, args, kw):
    """Every float64 tensor of the sample (input, args, kwargs), as fresh leaves that require grad."""
    def lift(t):
        return t.detach().clone().requires_grad_() if torch.is_tensor(t) and t.dtype == torch.float64 else t
    return lift(x), tuple(lift(a) for a in args), {k: lift(v) for k, v in kw.items()}


def freq_scaled_reference(info, x, args, kw, seed: int):
    """torch's gradients without scale_grad_by_freq, the weight's rows then divided by their counts among the
    used indices: what the flag documents, and what torch's CUDA kernel computes. torch's CPU kernel in some
    releases (2.11, 2.13) divides a row by another row's count (pytorch/pytorch#190063)."""
    grads = grads_of(lambda a, b, c: info.op(a, *b, **c), x, args, {**kw, "scale_grad_by_freq": False}, seed)
    used = args[0].reshape(-1)
    padding = kw.get("padding_idx")
    if padding is not None:
        used = used[used != (padding + x.size(0) if padding < 0 else padding)]
    counts = torch.bincount(used, minlength=x.size(0)).clamp(min=1).to(x.dtype).unsqueeze(1)
    return [None if grads[0] is None else grads[0] / counts, *grads[1:]]


def grads_of(fn: Callable, x, args, kw, seed: int):
    x, args, kw = leaves(x, args, kw)
    inputs = [t for t in (x, *args, *kw.values()) if torch.is_tensor(t) and t.requires_grad]
    outs = [t for t in tensors(fn(x, args, kw)) if t.requires_grad]
    if not inputs or not outs:
        return None
    g = torch.Generator().manual_seed(seed)
    grad_outputs = [torch.randn(o.shape, generator=g, dtype=o.dtype).to(o.device) for o in outs]
    grads = torch.autograd.grad(outs, inputs, grad_outputs, allow_unused=True)
    return [None if t is None else (t.to_dense() if t.is_sparse else t) for t in grads]


def run_sample(info, adapter, sample, dtype, tally) -> None:
    name = info.name
    x, args, kw = sample.input, tuple(sample.args), dict(sample.kwargs)
    tally["tried"] += 1
    if dtype.is_complex:
        tally["refused: complex"] += 1
        return
    if name in GPUPRIM_DTYPES and dtype not in GPUPRIM_DTYPES[name]:
        tally["refused: dtype"] += 1
        return
    renorm = name == "nn.functional.embedding_bag" and kw.get("max_norm") is not None
    x_before = x.clone() if renorm else x  # max_norm renorms x in place: torch starts from the same table
    try:
        ours = adapter(x, args, kw)
    except Refused as r:
        tally[f"refused: {r.args[0]}"] += 1
        return
    tol = {}
    if renorm:
        table = x_before.clone()
        torch.embedding_renorm_(table, args[0].reshape(-1), kw["max_norm"], kw.get("norm_type", 2.0))
        # 16-bit: the renormed rows are computed in fp32 and stored in the dtype (torch CPU rounds the norm
        # to the dtype first): a unit in the last place of the table, and of the sums of its rows.
        tol = {} if dtype in (torch.float64, torch.float32) else dict(rtol=4e-3, atol=4e-3)
        torch.testing.assert_close(x, table, **tol)
    if dtype in (torch.float16, torch.bfloat16) and name in WIDE_ARITHMETIC:
        theirs = wide_reference(info, x_before, args, kw, dtype)
    else:
        theirs = info.op(x_before, *args, **kw)
    compare(name, ours, theirs, x, args, kw, **tol)
    if dtype == torch.float64 and info.supports_autograd and name not in ("topk", "sort"):
        ours_grads = grads_of(adapter, x, args, kw, seed=tally["tried"])
        if name == "nn.functional.embedding_bag" and kw.get("sparse") and kw.get("scale_grad_by_freq"):
            kw = {**kw, "sparse": False}  # torch's backward refuses this pair; gpuprim's equals the dense one
        theirs_grads = grads_of(lambda a, b, c: info.op(a, *b, **c), x, args, kw, seed=tally["tried"])
        if name == "nn.functional.embedding_bag" and kw.get("scale_grad_by_freq") and theirs_grads is not None:
            theirs_grads = freq_scaled_reference(info, x, args, kw, tally["tried"])
        if ours_grads is not None and theirs_grads is not None:
            for a, b in zip(ours_grads, theirs_grads):
                if a is None or b is None:
                    assert (a is None or not bool(a.any())) and (b is None or not bool(b.any()))
                else:
                    torch.testing.assert_close(a, b)
            tally["grad checked"] += 1
    tally["matched"] += 1


def test_torch_samples(device):
    report: Dict[str, collections.Counter] = {}
    failures = []
    for info in op_infos():
        key = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
        tally = report.setdefault(key, collections.Counter())
        torch_dtypes = info.supported_dtypes(device)
        for dtype in DTYPES:
            if dtype not in torch_dtypes:
                continue
            for sample in info.sample_inputs(device, dtype):
                try:
                    run_sample(info, ADAPTERS[info.name], sample, dtype, tally)
                except Exception as e:  # noqa: BLE001 - every failure is collected and reported
                    tally["failed"] += 1
                    failures.append(f"{key} {dtype} {sample.summary() if hasattr(sample, 'summary') else ''}: "
                                    f"{type(e).__name__}: {str(e)[:300]}")
    print_report(device, report)
    for counts in report.values():
        for k in counts:
            assert not k.startswith("refused: ") or k[len("refused: "):] in REFUSALS, k
    first_per_op = {f.split(" ", 1)[0]: f for f in reversed(failures)}
    assert not failures, f"{len(failures)} failures; the first of each op:\n" + "\n".join(first_per_op.values())
    assert sum(c["matched"] for c in report.values()) > 0


def print_report(device: str, report: Dict[str, collections.Counter]) -> None:
    print(f"\nOpInfo samples through gpuprim on {device}:")
    print(f"{'op':40} {'tried':>6} {'matched':>8} {'grads':>6} {'failed':>7}  refused")
    for key, c in sorted(report.items()):
        refused = ", ".join(f"{k[len('refused: '):]} {v}" for k, v in sorted(c.items()) if k.startswith("refused: "))
        print(f"{key:40} {c['tried']:6} {c['matched']:8} {c['grad checked']:6} {c['failed']:7}  {refused}")
