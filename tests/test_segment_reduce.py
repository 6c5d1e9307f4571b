"""gpuprim.segment_reduce against a float64 pure-PyTorch reference, on CPU and CUDA."""
import pytest
import torch

import gpuprim
from op_checks import (
    assert_bitwise_equal,
    assert_deterministic,
    check_compiled_backward,
    check_compiles,
    check_no_grad_fast_path,
    check_no_sync_and_graph_capture,
    opcheck_sample_ok,
    run_opcheck,
)
from samples import FLOAT_DTYPES, INDEX_DTYPES

REDUCTIONS = ("sum", "mean", "max", "min")
RAGGED_D = (1, 3, 33, 128, 130)


# ---------------------------------------------------------------- reference
def clamped_bounds(offsets, rows):
    """The op's documented reading of offsets: clamp into [0, rows]; a decreasing pair is an empty segment."""
    offs = [int(v) for v in offsets.cpu().tolist()]
    bounds = []
    for s in range(len(offs) - 1):
        lo = min(max(offs[s], 0), rows)
        hi = max(lo, min(max(offs[s + 1], 0), rows))
        bounds.append((lo, hi))
    return bounds


def reference(src, offsets, reduce, dim=0):
    """Readable reference: a float64 loop over segments with torch's own reductions (amax/amin propagate NaN)."""
    x = src.detach().double().cpu().movedim(dim, 0)
    outs = []
    for lo, hi in clamped_bounds(offsets, x.size(0)):
        seg = x[lo:hi]
        if hi == lo:
            outs.append(torch.zeros(x.shape[1:], dtype=torch.float64))
        elif reduce == "sum":
            outs.append(seg.sum(0))
        elif reduce == "mean":
            outs.append(seg.sum(0) / (hi - lo))
        elif reduce == "max":
            outs.append(seg.amax(0))
        else:
            outs.append(seg.amin(0))
    out = torch.stack(outs) if outs else torch.zeros((0,) + tuple(x.shape[1:]), dtype=torch.float64)
    return out.movedim(0, dim)


def error_bound(src, offsets, reduce, dim):
    """A sum of m terms in any order is within m * eps_acc * sum|x| of the exact sum (Higham's gamma_m);
    fp16/bf16 accumulate in fp32; the final rounding to the output dtype adds eps_out * |exact|."""
    acc = torch.float32 if src.dtype in (torch.float16, torch.bfloat16) else src.dtype
    x = src.detach().double().cpu().movedim(dim, 0)
    bounds = []
    for lo, hi in clamped_bounds(offsets, x.size(0)):
        m = hi - lo
        abs_sum = x[lo:hi].abs().sum(0) if m else torch.zeros(x.shape[1:], dtype=torch.float64)
        b = (m + 1) * torch.finfo(acc).eps * abs_sum
        bounds.append(b / m if (reduce == "mean" and m) else b)
    out = torch.stack(bounds) if bounds else torch.zeros((0,) + tuple(x.shape[1:]), dtype=torch.float64)
    return out.movedim(0, dim)


def assert_matches_reference(out, src, offsets, reduce, dim=0, what=""):
    ref = reference(src, offsets, reduce, dim)
    assert out.dtype == src.dtype and out.device == src.device, what
    assert tuple(out.shape) == tuple(ref.shape), f"{what}: shape {tuple(out.shape)} vs {tuple(ref.shape)}"
    got = out.detach().double().cpu()
    assert torch.equal(torch.isnan(got), torch.isnan(ref)), f"{what}: NaN positions differ"
    if reduce in ("max", "min"):
        # Exact: the result is one of the inputs (or the fill 0).
        expected = ref.to(src.dtype).double()
        assert torch.equal(got.nan_to_num(0.0), expected.nan_to_num(0.0)), f"{what}: values differ"
        return
    inf = torch.isinf(ref)
    assert torch.equal(got[inf], ref[inf]), f"{what}: infinities differ"
    finite = torch.isfinite(ref)
    bound = error_bound(src, offsets, reduce, dim) + torch.finfo(src.dtype).eps * ref.abs() + 1e-300
    err = (got - ref).abs()
    assert bool((err[finite] <= bound[finite]).all()), f"{what}: max err {err[finite].max()}"


# ---------------------------------------------------------------- samples
def lengths_to_offsets(lengths, dtype=torch.int64):
    return torch.tensor([0] + list(torch.tensor(lengths, dtype=torch.int64).cumsum(0).tolist()), dtype=dtype)


def make_cases(dtype, index_dtype=torch.int64, device="cpu"):
    """(name, src, offsets, dim) covering every code path: empty, zero segments, empty segments at the ends and
    in the middle, one giant segment, many tiny ones, ragged D, NaN/inf, non-contiguous src, dim=1 of 3-D."""
    g = torch.Generator().manual_seed(7)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

    def offs(lengths):
        return lengths_to_offsets(lengths, index_dtype)

    tiny = torch.randint(0, 4, (700,), generator=g).tolist()
    cases = [
        ("empty_src", rand(0, 5), offs([0, 0]), 0),
        ("empty_src_no_segments", rand(0, 5), offs([]), 0),
        ("no_segments", rand(10, 3), offs([]), 0),
        ("one_row", rand(1, 4), offs([1]), 0),
        ("empty_ends_middle", rand(20, 6), offs([0, 0, 5, 0, 7, 8, 0, 0]), 0),
        ("giant", rand(5000, 3), offs([5000]), 0),
        ("tiny_segments", rand(sum(tiny), 5), offs(tiny), 0),
        ("one_d", rand(1000), offs([1, 0, 500, 499]), 0),
    ]
    for d in RAGGED_D:
        lengths = torch.randint(0, 40, (30,), generator=g).tolist()
        cases.append((f"D{d}", rand(sum(lengths), d), offs(lengths), 0))
    special = rand(60, 4)
    special[3, 0], special[10, 1], special[11, 1], special[20, 2], special[21, 2] = (
        float("nan"), float("inf"), float("-inf"), float("inf"), 1.0)
    special[40:50, 3] = float("-inf")
    cases.append(("nan_inf", special, offs([5, 10, 10, 15, 20]), 0))
    cases.append(("noncontiguous", rand(33, 90).t(), offs([10, 0, 50, 30]), 0))
    cases.append(("dim1_3d", rand(4, 50, 6), offs([3, 17, 0, 30]), 1))
    cases.append(("dim_last", rand(5, 7, 40), offs([10, 0, 30]), -1))
    return [(name, src.to(device), o.to(device), dim) for name, src, o, dim in cases]


def large_cases(dtype, device):
    """Inputs longer than one chunk on CUDA (chunk_rows = max(65536 / tile columns, rows / 2048)): the
    partials and their combine, many segments of mixed lengths across several 256-segment groups."""
    g = torch.Generator().manual_seed(11)
    lengths = torch.randint(0, 50, (600,), generator=g)
    lengths[[5, 300, 599]] = torch.tensor([3000, 9000, 1500])
    cases = [
        ("giant_d128", torch.randn(100_000, 128, generator=g), lengths_to_offsets([100_000]), 0),
        ("giant_d1", torch.randn(300_000, generator=g), lengths_to_offsets([0, 300_000, 0]), 0),
        ("mixed_d32", torch.randn(int(lengths.sum()), 32, generator=g), lengths_to_offsets(lengths.tolist()), 0),
        ("giant_outer", torch.randn(3, 70_000, 8, generator=g), lengths_to_offsets([1, 69_998, 1]), 1),
    ]
    return [(name, src.to(dtype).to(device), o.to(device), dim) for name, src, o, dim in cases]


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_matches_reference(device, reduce, dtype, index_dtype):
    for name, src, offsets, dim in make_cases(dtype, index_dtype, device):
        out = gpuprim.segment_reduce(src, offsets, reduce, dim)
        assert out.is_contiguous()
        assert_matches_reference(out, src, offsets, reduce, dim, f"{name}/{reduce}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_large_matches_reference(device, reduce, dtype):
    for name, src, offsets, dim in large_cases(dtype, device):
        out = gpuprim.segment_reduce(src, offsets, reduce, dim)
        assert_matches_reference(out, src, offsets, reduce, dim, f"{name}/{reduce}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_cuda_matches_cpu(reduce, dtype):
    cases = make_cases(dtype) + large_cases(dtype, "cpu")
    for name, src, offsets, dim in cases:
        cpu = gpuprim.segment_reduce(src, offsets, reduce, dim)
        cuda = gpuprim.segment_reduce(src.cuda(), offsets.cuda(), reduce, dim)
        assert_matches_reference(cuda, src.cuda(), offsets.cuda(), reduce, dim, f"cuda {name}/{reduce}")
        if reduce in ("max", "min"):
            torch.testing.assert_close(cuda.cpu(), cpu, rtol=0, atol=0, equal_nan=True, msg=name)


def test_int32_and_int64_offsets_agree(device):
    src = torch.randn(300, 17, device=device)
    lengths = [0, 100, 1, 0, 150, 49, 0]
    for reduce in REDUCTIONS:
        a = gpuprim.segment_reduce(src, lengths_to_offsets(lengths, torch.int32).to(device), reduce)
        b = gpuprim.segment_reduce(src, lengths_to_offsets(lengths, torch.int64).to(device), reduce)
        assert_bitwise_equal(a, b, reduce)


def test_empty_segment_fill_is_zero(device):
    src = torch.full((4, 3), -5.0, device=device)
    offsets = torch.tensor([0, 0, 4, 4], device=device)
    for reduce in REDUCTIONS:
        out = gpuprim.segment_reduce(src, offsets, reduce)
        assert torch.equal(out[0].cpu(), torch.zeros(3)) and torch.equal(out[2].cpu(), torch.zeros(3)), reduce


def test_nan_propagates_in_max_min(device):
    src = torch.tensor([[1.0, 2.0], [float("nan"), 5.0], [3.0, float("nan")], [0.0, 1.0]], device=device)
    offsets = torch.tensor([0, 2, 4], device=device)
    for reduce in ("max", "min"):
        out = gpuprim.segment_reduce(src, offsets, reduce).cpu()
        assert torch.equal(torch.isnan(out), torch.tensor([[True, False], [False, True]])), reduce


def test_bad_offsets_raise_on_cpu():
    """The CPU kernel checks the offsets at the call: they start at 0, never decrease, end at or before the rows."""
    src = torch.randn(10, 4)
    for raw, message in (([-5, 3, 10], r"offsets\[0\] = -5 must be 0"),
                         ([3, 2, 5], r"offsets\[0\] = 3 must be 0"),
                         ([0, 5, 3, 10], r"offsets\[2\] = 3 is less than offsets\[1\] = 5"),
                         ([0, 4], r"offsets\[1\] = 4 must be 10, the length it must cover"),
                         ([0, 20], r"offsets\[1\] = 20 is past the end: greater than 10")):
        with pytest.raises(ValueError, match="gpuprim.segment_reduce: " + message):
            gpuprim.segment_reduce(src, torch.tensor(raw))
    gpuprim.segment_reduce(src, torch.tensor([0, 3, 3, 10]))  # empty segments are fine


@pytest.mark.gpu
def test_bad_offsets_on_cuda_are_memory_safe():
    """On CUDA, out-of-range offsets are clamped into [0, rows] and decreasing pairs give empty segments: never an
    out-of-bounds access, results as the reference reads them."""
    src = torch.randn(10, 4, device="cuda")
    for raw in ([-5, 3, 2, 7, 100], [4, 2, 10], [0, 20], [3, 3, 1, -1]):
        offsets = torch.tensor(raw, device="cuda")
        for reduce in REDUCTIONS:
            out = gpuprim.segment_reduce(src, offsets, reduce)
            assert_matches_reference(out, src, offsets, reduce, 0, f"{raw}/{reduce}")
            with pytest.raises(gpuprim.InputError, match=r"gpuprim.segment_reduce: offsets\["):
                gpuprim.check_errors()  # recorded, reported once


# ---------------------------------------------------------------- determinism
def test_bitwise_reproducible(device):
    g = torch.Generator().manual_seed(3)
    uniform = torch.randn(64 * 500, 128, generator=g).to(device)
    uniform_offsets = torch.arange(0, 64 * 500 + 1, 64, device=device)
    giant = torch.randn(200_000, 16, generator=g).to(device)
    giant_offsets = torch.tensor([0, 200_000], device=device)
    for reduce in REDUCTIONS:
        assert_deterministic(lambda: gpuprim.segment_reduce(uniform, uniform_offsets, reduce))
        assert_deterministic(lambda: gpuprim.segment_reduce(giant, giant_offsets, reduce))
    src = giant.requires_grad_()
    for reduce in REDUCTIONS:
        grad = torch.randn(1, 16, device=device)
        assert_deterministic(
            lambda: torch.autograd.grad(gpuprim.segment_reduce(src, giant_offsets, reduce), src, grad)[0])


# ---------------------------------------------------------------- opcheck, autograd, compile
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_opcheck(device, reduce):
    for name, src, offsets, dim in make_cases(torch.float32, torch.int64, device):
        if not opcheck_sample_ok(src) or name in ("tiny_segments",):
            continue
        run_opcheck(torch.ops.gpuprim.segment_reduce.default, (src, offsets, reduce, dim))


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_opcheck_with_grad(device, reduce):
    g = torch.Generator().manual_seed(5)
    for shape, lengths, dim in (((30, 7), [0, 10, 15, 5], 0), ((3, 20, 4), [4, 0, 16], 1), ((40,), [40], 0)):
        src = torch.randn(*shape, generator=g, dtype=torch.float64).to(device).requires_grad_()
        offsets = lengths_to_offsets(lengths).to(device)
        run_opcheck(torch.ops.gpuprim.segment_reduce.default, (src, offsets, reduce, dim))
        out = gpuprim.segment_reduce(src, offsets, reduce, dim).detach()
        grad = torch.randn_like(out)
        run_opcheck(torch.ops.gpuprim.segment_reduce_backward.default,
                    (grad, src.detach(), offsets, out, reduce, dim))


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_gradcheck(device, reduce):
    # randn values: no exact ties, so max/min are differentiable at the sample point.
    g = torch.Generator().manual_seed(9)
    for shape, lengths, dim in (((25, 6), [0, 7, 1, 17, 0], 0), ((2, 15, 3), [5, 0, 10], 1), ((12,), [12], -1)):
        src = torch.randn(*shape, generator=g, dtype=torch.float64).to(device).requires_grad_()
        offsets = lengths_to_offsets(lengths, torch.int32).to(device)
        assert torch.autograd.gradcheck(lambda t: gpuprim.segment_reduce(t, offsets, reduce, dim), (src,))


def test_max_min_tie_rule(device):
    """Ties: the whole gradient goes to the first (lowest-index) extreme row of each segment and column."""
    src = torch.tensor([[1.0, 7.0], [3.0, 7.0], [3.0, 2.0], [5.0, 5.0], [5.0, 5.0]], device=device,
                       requires_grad=True)
    offsets = torch.tensor([0, 3, 5], device=device)
    (grad,) = torch.autograd.grad(gpuprim.segment_reduce(src, offsets, "max"), src, torch.ones(2, 2, device=device))
    assert torch.equal(grad.cpu(), torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]))
    (grad,) = torch.autograd.grad(gpuprim.segment_reduce(src, offsets, "min"), src, torch.ones(2, 2, device=device))
    assert torch.equal(grad.cpu(), torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]]))


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_grad_matches_torch(device, reduce):
    src = torch.randn(200, 9, device=device, requires_grad=True)
    lengths = [50, 0, 1, 149]
    offsets = lengths_to_offsets(lengths).to(device)
    grad = torch.randn(4, 9, device=device)
    (ours,) = torch.autograd.grad(gpuprim.segment_reduce(src, offsets, reduce), src, grad)
    parts = []
    for s, (lo, hi) in enumerate(clamped_bounds(offsets, 200)):
        if hi > lo:
            seg = src[lo:hi]
            op = {"sum": lambda t: t.sum(0), "mean": lambda t: t.mean(0), "max": lambda t: t.amax(0),
                  "min": lambda t: t.amin(0)}[reduce]
            parts.append((op(seg) * grad[s]).sum())
    (theirs,) = torch.autograd.grad(torch.stack(parts).sum(), src)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x, offsets):
        return gpuprim.segment_reduce(x * 2, offsets, "mean") + gpuprim.segment_reduce(x, offsets, "max")

    check_compiles(f, torch.randn(50, 8, device=device), lengths_to_offsets([10, 0, 40]).to(device), dynamic=dynamic)
    check_compiles(f, torch.randn(37, 3, device=device), lengths_to_offsets([1, 36]).to(device), dynamic=dynamic)


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_compile_inductor_with_backward(device, reduce):
    def step(x, offsets):
        return gpuprim.segment_reduce(x, offsets, reduce).square().sum()

    x = torch.randn(40, 16, device=device, requires_grad=True)
    offsets = lengths_to_offsets([10, 0, 25, 5]).to(device)
    check_compiled_backward(step, x, offsets, dynamic=True)


def test_cpp_api_and_ops_agree(device):
    src = torch.randn(20, 5, device=device)
    offsets = lengths_to_offsets([5, 15]).to(device)
    assert_bitwise_equal(torch.ops.gpuprim.segment_reduce(src, offsets), gpuprim.segment_reduce(src, offsets, "sum"))


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    src = torch.randn(200_000, 64, device="cuda")
    offsets = torch.cat([torch.arange(0, 100_000, 50), torch.tensor([200_000])]).cuda()
    for reduce in REDUCTIONS:
        check_no_sync_and_graph_capture(lambda: gpuprim.segment_reduce(src, offsets, reduce))
    x = src.requires_grad_()
    grad = torch.randn(offsets.numel() - 1, 64, device="cuda")
    for reduce in REDUCTIONS:
        check_no_sync_and_graph_capture(
            lambda: torch.autograd.grad(gpuprim.segment_reduce(x, offsets, reduce), x, grad)[0])


# ---------------------------------------------------------------- errors
def test_bad_arguments(device):
    src = torch.randn(6, 4, device=device)
    offsets = torch.tensor([0, 2, 6], device=device)
    with pytest.raises(ValueError, match="gpuprim.segment_reduce: reduce must be one of 'sum', 'mean', 'max', 'min', "
                       "'prod', got 'x'"):
        gpuprim.segment_reduce(src, offsets, "x")
    with pytest.raises(IndexError, match=r"gpuprim.segment_reduce: dim must be in \[-2, 1\], got 2"):
        gpuprim.segment_reduce(src, offsets, "sum", 2)
    with pytest.raises(ValueError, match=r"gpuprim.segment_reduce: dim \(axis\) must be offsets.dim\(\) - 1 = 1 "
                       r"with 2-D \(batched\) offsets / lengths, got 0"):
        gpuprim.segment_reduce(src, offsets.view(1, 3))
    with pytest.raises(TypeError, match="gpuprim.segment_reduce: offsets must be an int32 or int64 tensor, got Float"):
        gpuprim.segment_reduce(src, offsets.float())
    with pytest.raises(ValueError, match="gpuprim.segment_reduce: offsets must be of length num_segments"):
        gpuprim.segment_reduce(src, offsets[:0])
    with pytest.raises(TypeError, match="gpuprim.segment_reduce: src must be a float16, bfloat16, float32 or float64"):
        gpuprim.segment_reduce(src.long(), offsets)
    with pytest.raises(ValueError, match="gpuprim.segment_reduce: src must be at least 1-D"):
        gpuprim.segment_reduce(src[0, 0], offsets)


def test_validate_mode(device):
    src = torch.randn(6, 4, device=device)
    with gpuprim.validate():
        gpuprim.segment_reduce(src, torch.tensor([0, 2, 2, 6], device=device))
        with pytest.raises(ValueError, match=r"offsets\[0\] must be 0, got 1"):
            gpuprim.segment_reduce(src, torch.tensor([1, 2, 6], device=device))
        with pytest.raises(ValueError, match=r"offsets\[-1\] must be src.size\(0\) = 6, got 5"):
            gpuprim.segment_reduce(src, torch.tensor([0, 2, 5], device=device))
        with pytest.raises(ValueError,
                           match=r"offsets must be non-decreasing, got offsets\[1\] = 4 > offsets\[2\] = 3"):
            gpuprim.segment_reduce(src, torch.tensor([0, 4, 3, 6], device=device))
    bad = torch.tensor([1, 2, 6], device=device)  # outside validate mode: raised at the call on the CPU,
    if device == "cpu":  # recorded by the kernel and reported later on CUDA
        with pytest.raises(ValueError, match=r"offsets\[0\] = 1 must be 0"):
            gpuprim.segment_reduce(src, bad)
    else:
        gpuprim.segment_reduce(src, bad)
        with pytest.raises(gpuprim.InputError, match=r"offsets\[0\] = 1 must be 0"):
            gpuprim.check_errors()


def test_noncontiguous_offsets(device):
    src = torch.randn(40, 8, device=device)
    for dtype in INDEX_DTYPES:
        strided = torch.tensor([0, -1, 10, -1, 10, -1, 40, -1], dtype=dtype, device=device)[::2]
        for reduce in REDUCTIONS:
            assert_matches_reference(gpuprim.segment_reduce(src, strided, reduce), src, strided, reduce)


@pytest.mark.gpu
def test_cuda_offsets_on_another_device():
    src = torch.randn(40, 8, device="cuda")
    with pytest.raises(ValueError, match="gpuprim.segment_reduce: offsets must be on the same device as the first"):
        gpuprim.segment_reduce(src, torch.tensor([0, 40]))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    rows, d = (1 << 31) // 64 + 4099, 64
    src = torch.zeros(rows, d, dtype=torch.float16, device="cuda")  # 4.3 GB, element indices past 2^31
    beyond = (1 << 31) // 64 + 7
    src[beyond, 5] = 2.0
    src[rows - 1] = 3.0
    offsets = torch.tensor([0, 5, rows - 1, rows], device="cuda")
    for reduce, middle in (("sum", 2.0), ("max", 2.0), ("min", 0.0)):
        out = gpuprim.segment_reduce(src, offsets, reduce).float().cpu()
        assert out[1, 5].item() == middle and out[2, 0].item() == 3.0 and out[0].abs().sum().item() == 0, reduce


def test_no_grad_fast_path(device):
    src = torch.randn(40, 6, dtype=torch.float64, device=device)
    offsets = torch.tensor([0, 3, 3, 17, 40], device=device)
    check_no_grad_fast_path(lambda t: gpuprim.segment_reduce(t, offsets, "sum"), src)
