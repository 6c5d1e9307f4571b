"""gpuprim.cumsum against a float64 pure-PyTorch reference, on CPU and CUDA."""
import pytest
import torch

import gpuprim
from op_checks import (
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
MODES = [(False, False), (True, False), (False, True), (True, True)]  # (exclusive, reverse)


def reference_cumsum(x, dim, exclusive, reverse):
    """Readable reference: a float64 (or int64) torch.cumsum, with flips for reverse and a shift
    by one for exclusive."""
    wide = x.double() if x.is_floating_point() else x.long()
    if x.dim() == 0:
        return torch.zeros_like(wide) if exclusive else wide
    if reverse:
        wide = wide.flip(dim)
    out = torch.cumsum(wide, dim)
    n = out.size(dim)
    if exclusive and n > 0:
        out = torch.cat([torch.zeros_like(out.narrow(dim, 0, 1)), out.narrow(dim, 0, n - 1)], dim)
    if reverse:
        out = out.flip(dim)
    return out


def gpuprim_out_dtype(dtype):
    return dtype if dtype.is_floating_point else torch.int64


def assert_scan_close(out, x, dim, exclusive, reverse):
    """Integers exactly; floats within the forward error bound of a summation of n terms:
    |out - exact| <= n * eps_acc * (running sum of |x|) + eps_out * |exact|  (Higham, gamma_n),
    where eps_acc is fp32's for 16-bit inputs (they accumulate in fp32)."""
    ref = reference_cumsum(x, dim, exclusive, reverse)
    assert out.dtype == gpuprim_out_dtype(x.dtype) and out.shape == x.shape
    if not x.is_floating_point():
        assert torch.equal(out.cpu(), ref.cpu())
        return
    out64, ref64 = out.double().cpu(), ref.cpu()
    finite = torch.isfinite(ref64)
    # Non-finite results (inf, nan) must appear at exactly the same places with the same value.
    assert torch.equal(torch.isnan(out64), torch.isnan(ref64))
    assert torch.equal(out64[torch.isinf(ref64)], ref64[torch.isinf(ref64)])
    n = 1 if x.dim() == 0 else x.size(dim)
    acc_dtype = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    abs_running = reference_cumsum(x.abs(), dim, exclusive, reverse).cpu()
    bound = n * torch.finfo(acc_dtype).eps * abs_running + torch.finfo(x.dtype).eps * ref64.abs() + 1e-300
    err = (out64 - ref64).abs()
    assert bool((err[finite] <= bound[finite]).all()), f"max err {err[finite].max()} vs bound"


def dims_of(x):
    return [-1] if x.dim() <= 1 else [-1, 0, 1]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matches_reference(device, dtype):
    for sample in value_samples(device, dtype):
        for dim in dims_of(sample.x):
            for exclusive, reverse in MODES:
                out = gpuprim.cumsum(sample.x, dim, exclusive=exclusive, reverse=reverse)
                assert out.device == sample.x.device
                assert_scan_close(out, sample.x, dim, exclusive, reverse)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu(dtype):
    for sample in value_samples("cpu", dtype):
        for dim in dims_of(sample.x):
            cpu = gpuprim.cumsum(sample.x, dim)
            cuda = gpuprim.cumsum(sample.x.cuda(), dim).cpu()
            if dtype.is_floating_point:
                assert_scan_close(cuda, sample.x, dim, False, False)
                assert_scan_close(cpu, sample.x, dim, False, False)
            else:
                assert torch.equal(cpu, cuda)


@pytest.mark.parametrize("size", [1, 5000, 300_000])
def test_bitwise_reproducible(device, size):
    x = torch.randn(size, generator=torch.Generator().manual_seed(size)).to(device)
    assert_deterministic(lambda: gpuprim.cumsum(x), runs=5)
    rows = torch.randn(64, size // 64 + 3).to(device)
    assert_deterministic(lambda: gpuprim.cumsum(rows, 1, exclusive=True, reverse=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16], ids=str)
def test_opcheck(device, dtype):
    for sample in value_samples(device, dtype):
        if sample.name in ("ragged9001", "long_rows", "constant") or not opcheck_sample_ok(sample.x):
            continue  # the first three take the same code paths as smaller samples
        for exclusive, reverse in MODES[::3]:
            run_opcheck(torch.ops.gpuprim.cumsum.default, (sample.x, -1), {"exclusive": exclusive, "reverse": reverse})


def test_opcheck_with_grad(device):
    x = torch.randn(6, 70, dtype=torch.float64, device=device, requires_grad=True)
    run_opcheck(torch.ops.gpuprim.cumsum.default, (x, 1), {"exclusive": True, "reverse": False})
    run_opcheck(torch.ops.gpuprim.cumsum.default, (x, 0), {"exclusive": False, "reverse": True})


@pytest.mark.parametrize("exclusive,reverse", MODES)
def test_gradcheck(device, exclusive, reverse):
    x = torch.randn(5, 9, dtype=torch.float64, device=device, requires_grad=True)
    for dim in (0, 1, -1):
        assert torch.autograd.gradcheck(lambda t: gpuprim.cumsum(t, dim, exclusive=exclusive, reverse=reverse), (x,))
        assert torch.autograd.gradgradcheck(lambda t: gpuprim.cumsum(t, dim, exclusive=exclusive, reverse=reverse),
                                            (x,))


def test_grad_matches_torch(device):
    x = torch.randn(300, dtype=torch.float32, device=device, requires_grad=True)
    g = torch.randn(300, device=device)
    (ours,) = torch.autograd.grad(gpuprim.cumsum(x), x, g)
    (theirs,) = torch.autograd.grad(torch.cumsum(x, 0), x, g)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        return gpuprim.cumsum(x * 2, 1, exclusive=True) + 1

    check_compiles(f, torch.randn(8, 300, device=device), dynamic=dynamic)
    check_compiles(f, torch.randn(5, 17, device=device), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    def step(x):
        return gpuprim.cumsum(x, -1, reverse=True).square().sum()

    x = torch.randn(4, 100, device=device, requires_grad=True)
    check_compiled_backward(step, x)


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randn(3, 100_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.cumsum(x, 1))
    check_no_sync_and_graph_capture(lambda: gpuprim.cumsum(x.flatten(), 0, exclusive=True))


def test_dtype_as_torch(device):
    """dtype= casts x first and gives that dtype, as torch.cumsum's (int32 wraps as torch's does)."""
    ints = torch.tensor([[2**30, 2**30, 5], [-3, 7, 1]], dtype=torch.int32, device=device)
    floats = torch.tensor([[1.5, -2.25, 4.0], [0.5, 0.5, 3.0]], device=device)
    cases = ((ints, torch.int32), (ints, torch.float64), (floats, torch.int64), (floats, torch.float64),
             (floats, torch.float16))
    for x, dtype in cases:
        expected = torch.cumsum(x.cpu(), 1, dtype=dtype)
        got = gpuprim.cumsum(x, 1, dtype=dtype)
        assert got.dtype == dtype, (x.dtype, dtype)
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)
    x = floats.requires_grad_()
    gpuprim.cumsum(x, 1, dtype=torch.float64).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), torch.tensor([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0]]))
    with pytest.raises(TypeError, match="gpuprim.cumsum: dtype must be a torch.dtype or None, got 'int32'"):
        gpuprim.cumsum(ints, 1, dtype="int32")


def test_bad_arguments(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(IndexError, match=r"gpuprim.cumsum: dim must be in \[-2, 1\], got 2"):
        gpuprim.cumsum(x, 2)
    with pytest.raises(TypeError,
                       match="gpuprim.cumsum: x must be a floating-point, integer or bool tensor, got Complex"):
        gpuprim.cumsum(torch.zeros(3, dtype=torch.complex64, device=device))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    n = 2**31 + 4099
    x = torch.ones(n, dtype=torch.int8, device="cuda")
    out = gpuprim.cumsum(x)  # int64 output: 17 GB
    probes = torch.tensor([0, 2**31 - 1, 2**31, n - 1], device="cuda")
    assert torch.equal(out[probes].cpu(), (probes + 1).cpu())
    del out
    out = gpuprim.cumsum(x, exclusive=True, reverse=True)
    assert torch.equal(out[probes].cpu(), (n - 1 - probes).cpu())


@pytest.mark.gpu
@pytest.mark.parametrize("algo", ["three_pass", "single_pass"])
def test_long_row_algorithms(algo, monkeypatch):
    """Both long-row algorithms (GPUPRIM_SCAN_ALGO; single_pass is the default for 4-byte accumulators)
    against the reference, bitwise reproducible, across tile boundaries (4096 or 8192-element tiles) and
    rows of more groups than the look-back window (32 groups of 32 tiles), for fp32 and bf16 (fp32
    accumulator)."""
    monkeypatch.setenv("GPUPRIM_SCAN_ALGO", algo)
    g = torch.Generator().manual_seed(7)
    for shape in [(4097,), (300_001,), (4096 * 1024 + 5,), (4096 * 2048 * 3 + 17,), (5, 4096 * 1100), (129, 9000)]:
        x = torch.randn(shape, generator=g, dtype=torch.float64).float().cuda()
        for exclusive, reverse in MODES:
            out = gpuprim.cumsum(x, -1, exclusive=exclusive, reverse=reverse)
            assert_scan_close(out, x, -1, exclusive, reverse)
        assert_deterministic(lambda: gpuprim.cumsum(x, -1), runs=3)
        halves = x.bfloat16()
        assert_scan_close(gpuprim.cumsum(halves, -1, reverse=True), halves, -1, False, True)
        assert_deterministic(lambda: gpuprim.cumsum(halves, -1), runs=3)
        ints = torch.randint(-5, 5, shape, generator=g, dtype=torch.int32).cuda()
        assert torch.equal(gpuprim.cumsum(ints, -1, reverse=True), reference_cumsum(ints, -1, False, True))


def test_no_grad_fast_path(device):
    x = torch.randn(6, 70, dtype=torch.float64, device=device)
    check_no_grad_fast_path(lambda t: gpuprim.cumsum(t, 1, exclusive=True), x)
