"""gpuprim.histogram against a pure-PyTorch reference (bin edges and searchsorted), on CPU and CUDA."""
import pytest
import torch

import gpuprim
from op_checks import check_compiles, check_no_sync_and_graph_capture, run_opcheck
from samples import FLOAT_DTYPES, value_samples


def reference_histogram(x, bins, lo, hi, weights=None):
    """Edges lo + k*(hi-lo)/bins in float64; a value's bin is the last edge <= it; [lo, hi) only."""
    values = x.reshape(-1).cpu().double()
    edges = torch.tensor([lo + (hi - lo) * k / bins for k in range(bins + 1)], dtype=torch.float64)
    keep = (values >= lo) & (values < hi)
    index = (torch.searchsorted(edges, values[keep], right=True) - 1).clamp(0, bins - 1)
    w = None if weights is None else weights.reshape(-1).cpu().double()[keep]
    counts = torch.bincount(index, weights=w, minlength=bins)
    return counts, torch.tensor([int((~keep).sum())])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + (torch.int32, torch.int64), ids=str)
@pytest.mark.parametrize("bins,lo,hi", [(1, -1.0, 1.0), (7, -2.0, 2.0), (256, -3.0, 3.0), (10, 0.0, 1000.0)])
def test_matches_reference(device, dtype, bins, lo, hi):
    for sample in value_samples(device, dtype):
        counts, overflow = gpuprim.histogram(sample.x, bins, lo, hi, return_overflow=True)
        ref_counts, ref_overflow = reference_histogram(sample.x, bins, lo, hi)
        assert counts.dtype == torch.int64 and counts.shape == (bins,)
        assert torch.equal(counts.cpu(), ref_counts), sample
        assert torch.equal(overflow.cpu(), ref_overflow), sample


def test_edges_nan_and_inf(device):
    x = torch.tensor([0.0, 0.25, 0.5, 0.9999, 1.0, -0.0, -1e-30, float("nan"), float("inf"), -float("inf")],
                     device=device)
    counts, overflow = gpuprim.histogram(x, 4, 0.0, 1.0, return_overflow=True)
    # 0.0, -0.0 -> bin 0; 0.25 -> 1; 0.5 -> 2; 0.9999 -> 3; 1.0 (last edge exclusive), -1e-30, nan, +-inf dropped.
    assert counts.tolist() == [2, 1, 1, 1] and overflow.item() == 5


@pytest.mark.parametrize("deterministic", [False, True])
def test_weighted(device, deterministic):
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(3, 1000, generator=g) * 2).to(device)
    w = torch.rand(3, 1000, generator=g).to(device)
    with gpuprim.deterministic(deterministic):
        counts = gpuprim.histogram(x, 32, -2.0, 2.0, w)
    ref, _ = reference_histogram(x, 32, -2.0, 2.0, w)
    assert counts.dtype == torch.float32
    torch.testing.assert_close(counts.cpu().double(), ref, rtol=1e-5, atol=1e-4)


@pytest.mark.gpu
def test_cuda_matches_cpu():
    for sample in value_samples("cpu", torch.float32):
        cpu = gpuprim.histogram(sample.x, 100, -2.5, 2.5, return_overflow=True)
        cuda = gpuprim.histogram(sample.x.cuda(), 100, -2.5, 2.5, return_overflow=True)
        assert torch.equal(cpu[0], cuda[0].cpu()) and torch.equal(cpu[1], cuda[1].cpu()), sample


def test_opcheck(device):
    x = torch.randn(2000, device=device)
    run_opcheck(torch.ops.gpuprim.histogram.default, (x, 16, -1.0, 1.0), {})
    run_opcheck(torch.ops.gpuprim.histogram.default,
                (x.reshape(40, 50), 16, -1.0, 1.0, torch.rand(40, 50, device=device)),
                {"deterministic": True})


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        return gpuprim.histogram(x, 8, -1.0, 1.0, return_overflow=True)

    check_compiles(f, torch.randn(1000, device=device), dynamic=dynamic)


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randn(1_000_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.histogram(x, 256, -3.0, 3.0, return_overflow=True))


def test_bad_arguments(device):
    x = torch.randn(10, device=device)
    with pytest.raises(ValueError, match="gpuprim.histogram: bins must be >= 1, got 0"):
        gpuprim.histogram(x, 0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"gpuprim.histogram: lo must be < hi \(1\), got 2"):
        gpuprim.histogram(x, 4, 2.0, 1.0)
    with pytest.raises(ValueError, match="gpuprim.histogram: lo and hi must be finite"):
        gpuprim.histogram(x, 4, 0.0, float("inf"))
    with pytest.raises(TypeError, match="gpuprim.histogram: x must be a floating-point or integer tensor, got Bool"):
        gpuprim.histogram(x > 0, 4, 0.0, 1.0)
    with pytest.raises(ValueError, match="gpuprim.histogram: weights must be of x's shape"):
        gpuprim.histogram(x, 4, 0.0, 1.0, torch.ones(11, device=device))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64),
                         ids=str)
def test_cuda_kernel_matches_cpu_every_dtype(dtype):
    """The fused CUDA kernel bins each value with the CPU kernel's float64 steps: counts equal exactly."""
    for sample in value_samples("cpu", dtype):
        # (256, 0, 256) and (16, -64, 64): integer inputs take the power-of-two-width integer binner.
        for bins, lo, hi in [(100, -2.5, 2.5), (7, -3.0, 1000.0), (256, 0.0, 256.0), (16, -64.0, 64.0)]:
            cpu = gpuprim.histogram(sample.x, bins, lo, hi, return_overflow=True)
            cuda = gpuprim.histogram(sample.x.cuda(), bins, lo, hi, return_overflow=True)
            assert torch.equal(cpu[0], cuda[0].cpu()) and torch.equal(cpu[1], cuda[1].cpu()), (sample, bins)


@pytest.mark.gpu
@pytest.mark.parametrize("bins", [16, 5000])  # shared-memory and global-memory partial histograms
def test_cuda_weighted_deterministic_bitwise(bins):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2_000_003, generator=g).cuda()
    w = torch.randn(2_000_003, generator=g).cuda()
    with gpuprim.deterministic(True):
        first = gpuprim.histogram(x, bins, -3.0, 3.0, w)
        for _ in range(3):
            assert torch.equal(gpuprim.histogram(x, bins, -3.0, 3.0, w), first)
    ref, _ = reference_histogram(x, bins, -3.0, 3.0, w)
    torch.testing.assert_close(first.cpu().double(), ref, rtol=1e-4, atol=1e-2)


@pytest.mark.gpu
def test_cuda_empty_weighted_deterministic():
    with gpuprim.deterministic(True):
        counts = gpuprim.histogram(torch.empty(0, device="cuda"), 8, 0.0, 1.0, torch.empty(0, device="cuda"))
    assert torch.equal(counts.cpu(), torch.zeros(8))


def test_not_differentiable(device):
    w = torch.rand(10, device=device, requires_grad=True)
    counts = gpuprim.histogram(torch.rand(10, device=device), 4, 0.0, 1.0, w)
    with pytest.raises(RuntimeError):
        counts.sum().backward()


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    """64-bit sizes in both binners: 2^31 + 5 uint8 values, integer (power-of-two width) and float64 bin math."""
    n = 2**31 + 5
    x = torch.zeros(n, dtype=torch.uint8, device="cuda")
    x[2**31 - 2:2**31 + 3] = 100
    x[-1] = 255
    counts, overflow = gpuprim.histogram(x, 256, 0.0, 256.0, return_overflow=True)  # PowerOfTwoBins
    assert int(counts[0]) == n - 6 and int(counts[100]) == 5 and int(counts[255]) == 1 and int(overflow) == 0
    counts, overflow = gpuprim.histogram(x, 10, 0.0, 250.0, return_overflow=True)  # EvenBins; 255 dropped
    assert int(counts[0]) == n - 6 and int(counts[4]) == 5 and int(overflow) == 1
