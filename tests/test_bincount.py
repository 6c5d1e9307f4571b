"""gpuprim.bincount against a pure-PyTorch reference, on CPU and CUDA."""
import pytest
import torch

import gpuprim
from op_checks import assert_deterministic, check_compiles, check_no_sync_and_graph_capture, run_opcheck
from samples import INT_DTYPES, index_samples

NUM_BINS = (1, 7, 256, 5000, 70_000)  # 70k int32 counters exceed shared memory: the global-atomics path


def reference_bincount(x, num_bins, weights=None):
    """Readable reference: keep the in-range values, torch.bincount them, count the rest."""
    x = x.cpu().long()
    keep = (x >= 0) & (x < num_bins)
    w = None if weights is None else weights.cpu().double()[keep]
    counts = torch.bincount(x[keep], weights=w, minlength=num_bins)
    return counts, torch.tensor([int((~keep).sum())])


def weight_sum_bound(x, num_bins, weights, dtype):
    """A sum of m terms in any order is within m * eps * sum|w| of the exact sum (gamma_m)."""
    keep = (x.cpu().long() >= 0) & (x.cpu().long() < num_bins)
    xs = x.cpu().long()[keep]
    m = torch.bincount(xs, minlength=num_bins).double()
    abs_sum = torch.bincount(xs, weights=weights.cpu().double().abs()[keep], minlength=num_bins)
    return m * torch.finfo(dtype).eps * abs_sum + 1e-300


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("num_bins", NUM_BINS)
def test_counts_match_reference(device, dtype, num_bins):
    for sample in index_samples(device, dtype, num_bins):
        counts, overflow = gpuprim.bincount(sample.x, num_bins, return_overflow=True)
        ref_counts, ref_overflow = reference_bincount(sample.x, num_bins)
        assert counts.dtype == torch.int64 and counts.shape == (num_bins,) and counts.device == sample.x.device
        assert torch.equal(counts.cpu(), ref_counts), sample
        assert torch.equal(overflow.cpu(), ref_overflow), sample


@pytest.mark.parametrize("weight_dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32],
                         ids=str)
@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("num_bins", [5, 300, 20_000])
def test_weighted_matches_reference(device, weight_dtype, deterministic, num_bins):
    g = torch.Generator().manual_seed(num_bins)
    for sample in index_samples(device, torch.int64, num_bins):
        n = sample.x.numel()
        weights = (torch.randn(n, generator=g) * 10).to(weight_dtype).to(device)
        with gpuprim.deterministic(deterministic):
            counts, overflow = gpuprim.bincount(sample.x, num_bins, weights, return_overflow=True)
        expected_dtype = torch.float32 if weight_dtype == torch.float32 else torch.float64
        # torch.bincount's output dtypes, checked against torch itself on in-range data:
        assert counts.dtype == expected_dtype
        ref, ref_overflow = reference_bincount(sample.x, num_bins, weights.to(expected_dtype))
        bound = weight_sum_bound(sample.x, num_bins, weights.to(expected_dtype), expected_dtype)
        assert bool(((counts.cpu().double() - ref).abs() <= bound).all()), sample
        assert torch.equal(overflow.cpu(), ref_overflow)


def test_dtypes_follow_torch_bincount(device):
    x = torch.tensor([0, 2, 2, 1], device=device)
    for w_dtype in (torch.float32, torch.float64, torch.float16, torch.int64):
        w = torch.ones(4, dtype=w_dtype, device=device)
        assert gpuprim.bincount(x, 3, w).dtype == torch.bincount(x.cpu(), w.cpu(), minlength=3).dtype


@pytest.mark.parametrize("num_bins", [10, 3000])
def test_weighted_deterministic_is_bitwise_reproducible(device, num_bins):
    g = torch.Generator().manual_seed(5)
    x = torch.randint(0, num_bins, (200_003,), generator=g).to(device)
    x[:50_000] = 3  # a hot bin: many peers per warp step
    w = torch.randn(x.numel(), generator=g).to(device)
    with gpuprim.deterministic(True):
        assert_deterministic(lambda: gpuprim.bincount(x, num_bins, w), runs=5)


def test_follows_torch_deterministic_flag(device):
    x = torch.randint(0, 10, (1000,), device=device)
    w = torch.randn(1000, device=device)
    torch.use_deterministic_algorithms(True)
    try:
        assert gpuprim.is_deterministic()
        assert_deterministic(lambda: gpuprim.bincount(x, 10, w))
    finally:
        torch.use_deterministic_algorithms(False)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_cuda_matches_cpu(dtype):
    for num_bins in NUM_BINS:
        for sample in index_samples("cpu", dtype, num_bins):
            cpu = gpuprim.bincount(sample.x, num_bins, return_overflow=True)
            cuda = gpuprim.bincount(sample.x.cuda(), num_bins, return_overflow=True)
            assert torch.equal(cpu[0], cuda[0].cpu()) and torch.equal(cpu[1], cuda[1].cpu()), sample


@pytest.mark.gpu
def test_large_skewed_and_misaligned():
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randint(0, 256, (50_000_001,), device="cuda", generator=g, dtype=torch.int32)
    x[1_000_000:40_000_000] = 17
    for view in (x, x[1:], x[3:-5]):  # x[1:] is not 16-byte aligned: the scalar-load path
        assert torch.equal(gpuprim.bincount(view, 256), torch.bincount(view, minlength=256))
    u8 = torch.randint(0, 256, (10_000_019,), device="cuda", generator=g, dtype=torch.uint8)
    assert torch.equal(gpuprim.bincount(u8, 256), torch.bincount(u8.long(), minlength=256))


def test_opcheck(device):
    for num_bins in (7, 70_000):
        for sample in index_samples(device, torch.int32, num_bins):
            run_opcheck(torch.ops.gpuprim.bincount.default, (sample.x, num_bins), {})
            w = torch.randn(sample.x.numel(), device=device)
            run_opcheck(torch.ops.gpuprim.bincount.default, (sample.x, num_bins, w), {"deterministic": True})


def test_weights_requiring_grad_raise_on_backward(device):
    x = torch.tensor([0, 1, 1], device=device)
    w = torch.ones(3, device=device, requires_grad=True)
    counts = gpuprim.bincount(x, 2, w)
    with pytest.raises(RuntimeError, match="bincount"):
        counts.sum().backward()


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x, w):
        counts = gpuprim.bincount(x, 16)
        with_weights, overflow = gpuprim.bincount(x, 16, w, return_overflow=True)
        return counts * 2, with_weights, overflow

    x = torch.randint(-2, 20, (1000,), device=device)
    # Deterministic mode: with the flag off, CUDA float weights are summed with atomics, and eager and
    # compiled runs may differ in the last bits (seen on the H200), which check_compiles forbids.
    with gpuprim.deterministic(True):
        check_compiles(f, x, torch.randn(1000, device=device), dynamic=dynamic)


def test_compile_inductor(device):
    def f(x):
        return gpuprim.bincount(x % 8, 8).float() / x.numel()

    check_compiles(f, torch.randint(0, 100, (500,), device=device), backend="inductor")


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randint(0, 300, (1_000_000,), device="cuda")
    w = torch.randn(1_000_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.bincount(x, 256, return_overflow=True))
    with gpuprim.deterministic(True):
        check_no_sync_and_graph_capture(lambda: gpuprim.bincount(x, 256, w))


def test_bad_arguments(device):
    x = torch.tensor([0, 1, 2], device=device)
    with pytest.raises(ValueError, match="gpuprim.bincount: num_bins must be >= 1, got 0"):
        gpuprim.bincount(x, 0)
    with pytest.raises(ValueError, match="gpuprim.bincount: num_bins must be >= 1, got -4"):
        gpuprim.bincount(x, -4)
    with pytest.raises(ValueError, match="gpuprim.bincount: x must be 1-D, got 2-D"):
        gpuprim.bincount(x.reshape(1, 3), 4)
    with pytest.raises(TypeError, match="gpuprim.bincount: x must be an integer tensor, got Float"):
        gpuprim.bincount(x.float(), 4)
    with pytest.raises(ValueError, match=r"gpuprim.bincount: weights must be 1-D with the length of x \(3\)"):
        gpuprim.bincount(x, 4, torch.ones(4, device=device))
    with pytest.raises(TypeError, match="gpuprim.bincount: x must be an integer tensor, got Bool"):
        gpuprim.bincount(x > 0, 4)


def test_validate_mode_raises_on_out_of_range(device):
    x = torch.tensor([0, 5, -1], device=device)
    assert torch.equal(gpuprim.bincount(x, 3).cpu(), torch.tensor([1, 0, 0]))  # default: dropped
    with gpuprim.validate():
        with pytest.raises(ValueError, match=r"gpuprim.bincount: values of x must be in \[0, 3\), got -1"):
            gpuprim.bincount(x, 3)
        with pytest.raises(ValueError, match=r"got 5"):
            gpuprim.bincount(x[:2], 3)


@pytest.mark.gpu
def test_weights_on_other_device_raise():
    with pytest.raises(ValueError, match="gpuprim.bincount: weights must be on the same device"):
        gpuprim.bincount(torch.tensor([0, 1], device="cuda"), 2, torch.ones(2))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    """64-bit sizes: 2^31 + 5 uint8 values (2 GiB), a few of them moved to other bins across the 2^31 mark."""
    n = 2**31 + 5
    x = torch.zeros(n, dtype=torch.uint8, device="cuda")
    x[2**31 - 2:2**31 + 3] = 7
    x[-1] = 255
    counts, overflow = gpuprim.bincount(x, 256, return_overflow=True)
    assert int(counts[0]) == n - 6 and int(counts[7]) == 5 and int(counts[255]) == 1
    assert int(counts.sum()) == n and int(overflow) == 0
    counts, overflow = gpuprim.bincount(x, 8, return_overflow=True)  # 255 is out of range: dropped
    assert int(counts[7]) == 5 and int(overflow) == 1
