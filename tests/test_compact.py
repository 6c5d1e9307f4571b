"""gpuprim.compact / gpuprim.masked_select against torch.masked_select, on CPU and CUDA.

A compaction has exactly one answer, so kept elements are compared bitwise (NaN payloads and the
sign of zero survive), the tail must be fill_value's bits (zero by default; unchecked for None), and
count exact.
"""
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
from samples import FLOAT_DTYPES, INT_DTYPES, value_samples

DTYPES = FLOAT_DTYPES + INT_DTYPES + (torch.bool,)
MASKS = ("random", "all", "none", "alternating", "first_last")


def make_mask(x, kind, seed=7):
    g = torch.Generator().manual_seed(seed)
    n = x.numel()
    if kind == "random":
        flat = torch.rand(n, generator=g) < 0.5
    elif kind == "all":
        flat = torch.ones(n, dtype=torch.bool)
    elif kind == "none":
        flat = torch.zeros(n, dtype=torch.bool)
    elif kind == "alternating":
        flat = torch.arange(n) % 2 == 0
    else:  # only the first and the last element
        flat = torch.zeros(n, dtype=torch.bool)
        if n:
            flat[0] = flat[-1] = True
    return flat.reshape(x.shape).to(x.device)


def bits(t):
    """The raw bits of t (floats as same-width ints, so NaN payloads and -0.0 compare exactly)."""
    if t.is_floating_point():
        return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t


def check_compact(x, mask, fill_value=0):
    out, count = gpuprim.compact(x, mask, fill_value=fill_value)
    expected = torch.masked_select(bits(x), mask)  # bit copies of the kept elements, row-major
    k = expected.numel()
    assert out.dtype == x.dtype and out.shape == (x.numel(),) and out.device == x.device
    assert count.dtype == torch.int64 and count.shape == (1,) and count.device == x.device
    assert int(count) == k
    assert torch.equal(bits(out)[:k].cpu(), expected.cpu()), "kept elements differ"
    if fill_value is not None:  # None leaves the tail unwritten: nothing to check there
        fill = bits(torch.full((), fill_value, dtype=x.dtype))
        assert bool((bits(out)[k:].cpu() == fill).all()), f"tail is not filled with {fill_value}"
    return out, count


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", MASKS)
def test_matches_masked_select(device, dtype, kind):
    for sample in value_samples(device, dtype):
        check_compact(sample.x, make_mask(sample.x, kind))


def test_structured_cases(device):
    for n in (1, 2, 31, 32, 33, 255, 256, 257, 4095, 4096, 4097, 65537, 300_001):
        x = torch.arange(n, device=device, dtype=torch.int64)
        for kind in MASKS:
            check_compact(x, make_mask(x, kind, seed=n))
        # A sparse mask, and a dense one with a single hole.
        sparse = torch.zeros(n, dtype=torch.bool, device=device)
        sparse[n // 2] = True
        check_compact(x, sparse)
        check_compact(x, ~sparse)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.uint8,
                                   torch.int64, torch.bool), ids=str)
def test_fill_value(device, dtype):
    fills = [None, True] if dtype == torch.bool else [None, 7, -1 if dtype != torch.uint8 else 255]
    if dtype.is_floating_point:
        fills += [float("nan"), -0.0, float("-inf"), 0.5]
    for n in (0, 1, 5, 4097, 8193, 70_001):
        x = (torch.randn(n, device=device) * 50).to(dtype)
        for kind in ("random", "all", "none"):
            for fill_value in fills:
                check_compact(x, make_mask(x, kind, seed=n), fill_value=fill_value)


def test_masked_select(device):
    x = torch.randn(37, 129, device=device)
    mask = make_mask(x, "random")
    assert torch.equal(gpuprim.masked_select(x, mask), torch.masked_select(x, mask))
    empty = torch.zeros(0, device=device)
    assert gpuprim.masked_select(empty, empty.bool()).shape == (0,)


@pytest.mark.parametrize("dtype", (torch.float32, torch.int32, torch.bool, torch.bfloat16), ids=str)
def test_opcheck(device, dtype):
    for sample in value_samples(device, dtype):
        if opcheck_sample_ok(sample.x):
            run_opcheck(torch.ops.gpuprim.compact.default, (sample.x, make_mask(sample.x, "random")))


def test_opcheck_requires_grad(device):
    x = torch.randn(7, 33, device=device, dtype=torch.float64, requires_grad=True)
    run_opcheck(torch.ops.gpuprim.compact.default, (x, make_mask(x, "random")))
    run_opcheck(torch.ops.gpuprim.compact.default, (x, make_mask(x, "random")), {"fill_value": -2.5})


def test_gradcheck(device):
    for shape in ((0,), (1,), (5,), (3, 7)):
        x = torch.randn(*shape, device=device, dtype=torch.float64, requires_grad=True)
        for kind in MASKS:
            mask = make_mask(x, kind)
            assert torch.autograd.gradcheck(lambda t: gpuprim.compact(t, mask)[0], (x,))
            assert torch.autograd.gradgradcheck(lambda t: gpuprim.compact(t, mask)[0], (x,))


def test_grad_matches_masked_select(device):
    x = torch.randn(50, 40, device=device, requires_grad=True)
    mask = make_mask(x, "random")
    k = int(mask.sum())
    g = torch.randn(x.numel(), device=device)
    (ours,) = torch.autograd.grad(gpuprim.compact(x, mask)[0], x, g)
    (theirs,) = torch.autograd.grad(torch.masked_select(x, mask), x, g[:k])
    assert torch.equal(ours, theirs)
    out, count = gpuprim.compact(x, mask)
    assert out.requires_grad and not count.requires_grad


def test_deterministic(device):
    x = torch.randn(100_003, device=device)
    mask = make_mask(x, "random")
    assert_deterministic(lambda: gpuprim.compact(x, mask), runs=3)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x, mask):
        out, count = gpuprim.compact(x * 2, mask)
        return out + 1, count

    for n in (300, 1001):
        x = torch.randn(n, device=device)
        check_compiles(f, x, make_mask(x, "random"), dynamic=dynamic)
    x = torch.randn(8, 30, device=device)
    check_compiles(f, x, make_mask(x, "alternating"), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    def step(x, mask):
        out, _ = gpuprim.compact(x, mask)
        return (out * torch.arange(out.numel(), device=x.device)).sum()

    x = torch.randn(4, 100, device=device, requires_grad=True)
    mask = make_mask(x, "random")
    # The loss sums 400 terms of either sign: inductor's order may differ from eager's by up to
    # n * eps * sum(|term|) (an eager-vs-compiled difference of 3.4e-6 relative was seen on the H200).
    bound = x.numel() * torch.finfo(torch.float32).eps * float((x.detach().abs() * x.numel()).sum())
    check_compiled_backward(step, x, mask, loss_atol=bound)


def test_bad_arguments(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(TypeError, match="gpuprim.compact: mask must be a bool tensor, got Int"):
        gpuprim.compact(x, torch.ones(3, 4, dtype=torch.int32, device=device))
    with pytest.raises(ValueError, match="gpuprim.compact: mask must be of x's shape"):
        gpuprim.compact(x, torch.ones(12, dtype=torch.bool, device=device))
    with pytest.raises(TypeError, match="gpuprim.compact: x must be a floating-point, integer or bool tensor"):
        gpuprim.compact(torch.zeros(3, dtype=torch.complex64, device=device), torch.ones(3, dtype=torch.bool,
                                                                                        device=device))
    keep = torch.ones(3, dtype=torch.bool, device=device)
    with pytest.raises(ValueError, match="gpuprim.compact: fill_value must be representable in x's dtype Byte, "
                                         "got 300"):
        gpuprim.compact(torch.zeros(3, dtype=torch.uint8, device=device), keep, fill_value=300)
    with pytest.raises(ValueError, match="gpuprim.compact: fill_value must be representable in x's dtype Int, "
                                         "got nan"):
        gpuprim.compact(torch.zeros(3, dtype=torch.int32, device=device), keep, fill_value=float("nan"))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu(dtype):
    for sample in value_samples("cpu", dtype):
        for kind in MASKS:
            mask = make_mask(sample.x, kind)
            for fill_value in (0, 1):
                cpu = gpuprim.compact(sample.x, mask, fill_value=fill_value)
                cuda = gpuprim.compact(sample.x.cuda(), mask.cuda(), fill_value=fill_value)
                for a, b in zip(cpu, cuda):
                    assert_bitwise_equal(a, b.cpu(), f"{sample} {kind} fill {fill_value}")


@pytest.mark.gpu
def test_cuda_large_random():
    for n in (1 << 20, (1 << 24) + 12345):
        x = torch.randn(n, device="cuda")
        mask = torch.rand(n, device="cuda") < 0.5
        check_compact(x, mask)
        check_compact(x.half(), mask)
        check_compact(x.double(), mask)
        check_compact(x[3:], mask[3:])  # storage offsets: element-by-element loads instead of vectors
        check_compact(x[4:], mask[:-4])
        check_compact(x, mask, fill_value=None)
        check_compact(x.to(torch.uint8), mask, fill_value=3)


@pytest.mark.gpu
def test_cuda_two_passes():
    """From 128 MiB of x the kernel counts each tile's flags first, scans the counts, then compacts: every element
    size, flags and x off their 16-byte alignment, all / none kept, ragged last tiles."""
    n = (1 << 25) + 12345  # fp32: 128 MiB and a partial tile
    x = torch.randn(n, device="cuda")
    mask = torch.rand(n, device="cuda") < 0.5
    check_compact(x, mask)
    check_compact(x, mask, fill_value=None)
    check_compact(x[3:], mask[3:])  # x and flags unaligned: element-by-element loads, flags a byte at a time
    check_compact(x[4:], mask[:-4], fill_value=-2.0)
    check_compact(x.double(), mask)  # 8-byte words: tiles of 4096
    check_compact(x.half().repeat(2), mask.repeat(2))  # 2-byte words
    check_compact(x.to(torch.uint8).repeat(4), mask.repeat(4), fill_value=7)
    check_compact(x, torch.ones_like(mask))
    check_compact(x, torch.zeros_like(mask))
    check_no_sync_and_graph_capture(lambda: gpuprim.compact(x, mask), replays=2)


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randn(3, 100_000, device="cuda")
    mask = torch.rand(3, 100_000, device="cuda") < 0.3
    check_no_sync_and_graph_capture(lambda: gpuprim.compact(x, mask))
    check_no_sync_and_graph_capture(lambda: gpuprim.compact(x.t(), mask.t()))  # non-contiguous
    check_no_sync_and_graph_capture(lambda: gpuprim.compact(x, mask, fill_value=-1.0))
    e = torch.zeros(0, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.compact(e, e.bool()))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    n = 2**31 + 4099
    idx = torch.arange(n, device="cuda")
    x = (idx % 251).to(torch.uint8)
    mask = idx % 3 == 0
    del idx
    out, count = gpuprim.compact(x, mask)
    k = (n + 2) // 3
    assert int(count) == k
    kept = torch.arange(k, device="cuda") * 3 % 251
    assert torch.equal(out[:k], kept.to(torch.uint8))
    assert bool((out[k:] == 0).all())


def test_no_grad_fast_path(device):
    x = torch.randn(300, dtype=torch.float64, device=device)
    mask = torch.rand(300, device=device) < 0.4
    check_no_grad_fast_path(lambda t: gpuprim.compact(t, mask), x)
