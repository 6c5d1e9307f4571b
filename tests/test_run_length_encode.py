"""gpuprim.run_length_encode against torch.unique_consecutive(return_counts=True), on CPU and CUDA.

Runs split under the dtype's == (NaN != NaN, -0.0 == +0.0), as torch.unique_consecutive does;
unique holds the bits of each run's first element. Compared exactly, tails must be zero.
"""
import pytest
import torch

import gpuprim
from op_checks import (
    assert_bitwise_equal,
    assert_deterministic,
    check_compiles,
    check_no_sync_and_graph_capture,
    opcheck_sample_ok,
    run_opcheck,
)
from samples import FLOAT_DTYPES, INT_DTYPES, value_samples

DTYPES = FLOAT_DTYPES + INT_DTYPES + (torch.bool,)


def bits(t):
    if t.is_floating_point():
        return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t


def reference(x):
    """torch.unique_consecutive on the CPU, with unique taken as the bits of each run's first element."""
    xc = x.cpu()
    _, counts = torch.unique_consecutive(xc, return_counts=True)
    starts = torch.cumsum(counts, 0) - counts
    return bits(xc)[starts], counts


def runs_samples(device, dtype):
    """1-D inputs: the shared matrix flattened, plus long and short runs of few values."""
    g = torch.Generator().manual_seed(5)
    xs = [s.x.reshape(-1) if s.x.dim() != 1 else s.x for s in value_samples(device, dtype)]
    for n in (1, 100, 4097, 70_001):
        values = torch.randint(0, 3, (n,), generator=g)
        lengths = torch.randint(1, 40, (n,), generator=g)
        x = torch.repeat_interleave(values, lengths)[:n]
        xs.append(x.to(dtype).to(device))
    xs.append(torch.zeros(3, dtype=dtype, device=device))
    # The CUDA kernels work in tiles of 4096 elements (16 a thread): runs of exactly a tile, runs spanning
    # several tiles, and a view starting one element in (not 16-byte aligned: the scalar loads).
    tiled = torch.repeat_interleave(torch.tensor([0, 1, 0, 2]), torch.tensor([4096, 4096, 4095, 10_000]))
    xs.append(tiled.to(dtype).to(device))
    xs.append(x.to(dtype).to(device)[1:])
    if dtype.is_floating_point:
        xs.append(torch.tensor([float("nan")] * 3 + [-0.0, 0.0, -0.0, 1.0, 1.0, float("inf"), float("inf")],
                               dtype=dtype, device=device))
    return xs


def check_rle(x):
    unique, counts, num_runs = gpuprim.run_length_encode(x)
    ref_unique, ref_counts = reference(x)
    r = ref_counts.numel()
    n = x.numel()
    assert unique.dtype == x.dtype and unique.shape == (n,) and unique.device == x.device
    assert counts.dtype == torch.int64 and counts.shape == (n,)
    assert num_runs.dtype == torch.int64 and num_runs.shape == (1,) and num_runs.device == x.device
    assert int(num_runs) == r
    assert torch.equal(bits(unique)[:r].cpu(), ref_unique)
    assert torch.equal(counts[:r].cpu(), ref_counts)
    assert bool((bits(unique)[r:] == 0).all()) and bool((counts[r:] == 0).all()), "tails are not zero"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matches_unique_consecutive(device, dtype):
    for x in runs_samples(device, dtype):
        check_rle(x)


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool, torch.float16), ids=str)
def test_opcheck(device, dtype):
    for x in runs_samples(device, dtype):
        if opcheck_sample_ok(x):
            run_opcheck(torch.ops.gpuprim.run_length_encode.default, (x,))


def test_not_differentiable(device):
    x = torch.tensor([1.0, 1.0, 2.0], device=device, requires_grad=True)
    unique, _, _ = gpuprim.run_length_encode(x)
    with pytest.raises(RuntimeError):
        unique.sum().backward()


def test_deterministic(device):
    x = torch.randint(0, 4, (100_003,), device=device)
    assert_deterministic(lambda: gpuprim.run_length_encode(x), runs=3)


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool), ids=str)
def test_return_inverse_matches_torch(device, dtype):
    g = torch.Generator().manual_seed(0)
    for n in (0, 1, 2, 7, 1000):
        x = torch.randint(0, 3, (n,), generator=g).to(dtype).to(device)
        if dtype.is_floating_point and n > 3:
            x[1] = x[2] = float("nan")  # NaN != NaN: each its own run, as torch
            x[3] = -0.0
        unique, counts, num_runs, inverse = gpuprim.run_length_encode(x, return_inverse=True)
        theirs, theirs_inverse = torch.unique_consecutive(x, return_inverse=True)
        assert inverse.dtype == torch.int64 and torch.equal(inverse, theirs_inverse)
        assert int(num_runs) == theirs.numel()
    check_compiles(lambda t: gpuprim.run_length_encode(t, return_inverse=True)[3] * 2,
                   torch.randint(0, 3, (300,), device=device))


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        unique, counts, num_runs = gpuprim.run_length_encode(x + 1)
        return unique * 2, counts, num_runs

    for n in (300, 1001):
        check_compiles(f, torch.randint(0, 3, (n,), device=device), dynamic=dynamic)


def test_bad_arguments(device):
    with pytest.raises(ValueError, match="gpuprim.run_length_encode: x must be 1-D, got 2-D tensor"):
        gpuprim.run_length_encode(torch.zeros(2, 3, device=device))
    with pytest.raises(TypeError, match="gpuprim.run_length_encode: x must be a floating-point, integer or bool"):
        gpuprim.run_length_encode(torch.zeros(3, dtype=torch.complex64, device=device))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu(dtype):
    for x in runs_samples("cpu", dtype):
        cpu = gpuprim.run_length_encode(x)
        cuda = gpuprim.run_length_encode(x.cuda())
        for a, b in zip(cpu, cuda):
            assert_bitwise_equal(a, b.cpu(), f"{dtype} n={x.numel()}")


@pytest.mark.gpu
def test_cuda_large():
    g = torch.Generator().manual_seed(3)
    for n in (1 << 20, (1 << 24) + 777):
        x = torch.repeat_interleave(torch.randint(0, 5, (n,), generator=g), torch.randint(1, 9, (n,), generator=g))[:n]
        check_rle(x.cuda())
        check_rle(x.cuda().float())


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randint(0, 3, (300_000,), device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.run_length_encode(x))
    check_no_sync_and_graph_capture(lambda: gpuprim.run_length_encode(x[::3]))  # non-contiguous
    e = torch.zeros(0, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.run_length_encode(e))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    """64-bit sizes: 2^31 + 5 elements in three runs, one of them crossing 2^31."""
    n = 2**31 + 5
    x = torch.zeros(n, dtype=torch.uint8, device="cuda")
    x[2**31 - 3:2**31 + 2] = 7
    x[-1] = 9
    unique, counts, num_runs = gpuprim.run_length_encode(x)
    assert int(num_runs) == 4
    assert unique[:5].tolist() == [0, 7, 0, 9, 0]
    assert counts[:5].tolist() == [2**31 - 3, 5, 2, 1, 0]
    assert int(counts[-1]) == 0


# ---- dim=: runs of equal consecutive slices x.select(dim, i) (torch.unique_consecutive(x, dim=dim)) ----


def slice_samples(device, dtype):
    """(x, dim) pairs: 2-D and 3-D, every dim and a negative one, runs of repeated slices, empty, one slice, all
    equal, all distinct, 1-D, non-contiguous and (floats) zeros of both signs and NaNs."""
    g = torch.Generator().manual_seed(31)
    high = 2 if dtype == torch.bool else 3

    def rand(*shape):
        return torch.randint(0, high, shape, generator=g).to(dtype).to(device)

    runs = torch.repeat_interleave(rand(40, 3).cpu(), torch.randint(1, 5, (40,), generator=g), dim=0).to(device)
    out = [(runs, 0), (runs.t(), 1), (runs.t().contiguous(), -1), (rand(200, 2), 0)]
    cube = torch.repeat_interleave(rand(3, 4, 5), 2, dim=1)
    out += [(cube, 0), (cube, 1), (cube, 2), (cube, -1)]
    out += [(rand(0, 3), 0), (rand(3, 0), 1), (rand(2, 0, 3), 1), (rand(1, 4), 0)]
    out += [(torch.ones(6, 2, dtype=dtype, device=device), 0), (rand(9), 0), (runs[::2, 1:], 0)]
    if dtype != torch.bool:
        low = 0 if dtype == torch.uint8 else -10
        out.append((torch.arange(low, low + 60).reshape(20, 3).to(dtype).to(device), 0))  # all distinct
    if dtype.is_floating_point:
        nan = float("nan")
        special = torch.tensor([[0.0, 1.0], [-0.0, 1.0], [nan, 1.0], [nan, 1.0], [1.0, 2.0], [1.0, 2.0], [-nan, 0.0]])
        out += [(special.to(dtype).to(device), 0), (special.t().to(dtype).to(device), 1)]
    return out


def reference_dim(x, dim):
    """torch.unique_consecutive(dim=) on the CPU, with unique taken as the bits of each run's first slice."""
    xc = x.cpu()
    _, inverse, counts = torch.unique_consecutive(xc, return_inverse=True, return_counts=True, dim=dim)
    starts = torch.cumsum(counts, 0) - counts
    return xc.index_select(dim, starts), counts, inverse


def check_rle_dim(x, dim):
    unique, counts, num_runs, inverse = gpuprim.run_length_encode(x, dim=dim, return_inverse=True)
    ref_unique, ref_counts, ref_inverse = reference_dim(x, dim)
    r, m = ref_counts.numel(), x.shape[dim]
    what = f"dim={dim} shape={tuple(x.shape)}"
    assert unique.dtype == x.dtype and unique.shape == x.shape and unique.device == x.device, what
    assert counts.dtype == torch.int64 and counts.shape == (m,) and num_runs.shape == (1,), what
    assert int(num_runs) == r, what
    assert_bitwise_equal(unique.narrow(dim, 0, r).cpu(), ref_unique, what)
    assert torch.equal(counts[:r].cpu(), ref_counts) and torch.equal(inverse.cpu(), ref_inverse), what
    assert bool((bits(unique.narrow(dim, r, m - r)) == 0).all()) and bool((counts[r:] == 0).all()), what


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dim_matches_unique_consecutive(device, dtype):
    for x, dim in slice_samples(device, dtype):
        check_rle_dim(x, dim)


def test_dim_special_values(device):
    """NaN != NaN (a slice holding one is a run of its own); -0.0 == +0.0 (one run, the first slice's bits)."""
    nan = float("nan")
    x = torch.tensor([[0.0, 1.0], [-0.0, 1.0], [nan, 1.0], [nan, 1.0], [2.0, 2.0]], device=device)
    unique, counts, num_runs = gpuprim.run_length_encode(x, dim=0)
    assert int(num_runs) == 4 and counts.tolist() == [2, 1, 1, 1, 0]
    assert torch.signbit(unique[0, 0]).item() is False and torch.isnan(unique[1:3, 0]).all()


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool), ids=str)
def test_dim_opcheck(device, dtype):
    for x, dim in slice_samples(device, dtype):
        if opcheck_sample_ok(x):
            run_opcheck(torch.ops.gpuprim.run_length_encode.default, (x,), {"dim": dim})


def test_dim_deterministic(device):
    x = torch.repeat_interleave(torch.randint(0, 2, (20_000, 3)), 3, dim=0).to(device)
    assert_deterministic(lambda: gpuprim.run_length_encode(x, dim=0, return_inverse=True), runs=3)


@pytest.mark.parametrize("dynamic", [False, True])
def test_dim_compile(device, dynamic):
    def f(x):
        unique, counts, num_runs, inverse = gpuprim.run_length_encode(x + 1, dim=1, return_inverse=True)
        return unique * 2, counts, num_runs, inverse

    for n in (300, 1001):
        check_compiles(f, torch.randint(0, 2, (3, n), device=device), dynamic=dynamic)


def test_dim_bad_arguments(device):
    with pytest.raises(IndexError, match=r"gpuprim.run_length_encode: dim must be in \[-2, 1\], got 2"):
        gpuprim.run_length_encode(torch.zeros(2, 3, device=device), dim=2)
    with pytest.raises(IndexError, match="gpuprim.run_length_encode: dim must be None for a 0-d x, got 0"):
        gpuprim.run_length_encode(torch.tensor(1.0, device=device), dim=0)
    with pytest.raises(ValueError, match="gpuprim.run_length_encode: x must be free of empty dimensions other than"):
        gpuprim.run_length_encode(torch.zeros(0, 0, device=device), dim=1)  # torch refuses it too
    with pytest.raises(TypeError, match="gpuprim.run_length_encode: dim must be an integer"):
        gpuprim.run_length_encode(torch.zeros(2, 3, device=device), dim=1.0)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dim_cuda_matches_cpu(dtype):
    for x, dim in slice_samples("cpu", dtype):
        cpu = gpuprim.run_length_encode(x, dim=dim, return_inverse=True)
        cuda = gpuprim.run_length_encode(x.cuda(), dim=dim, return_inverse=True)
        for a, b in zip(cpu, cuda):
            assert_bitwise_equal(a, b.cpu(), f"{dtype} shape={tuple(x.shape)} dim={dim}")


@pytest.mark.gpu
def test_dim_cuda_large():
    g = torch.Generator().manual_seed(6)
    rows = torch.randint(0, 2, (1 << 18, 4), generator=g)
    x = torch.repeat_interleave(rows, torch.randint(1, 6, (1 << 18,), generator=g), dim=0)
    check_rle_dim(x.cuda(), 0)
    check_rle_dim(x.t().cuda(), 1)  # a wide slice per element of the 4 rows: the heads spread over threads
    check_rle_dim(torch.randint(0, 2, (3, 1 << 22), generator=g).cuda(), 0)  # 3 very wide slices


@pytest.mark.gpu
def test_dim_no_sync_and_graph_capture():
    x = torch.randint(0, 2, (100_000, 2), device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.run_length_encode(x, dim=0, return_inverse=True))
    check_no_sync_and_graph_capture(lambda: gpuprim.run_length_encode(x.t(), dim=1))  # non-contiguous
    e = torch.zeros(0, 3, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.run_length_encode(e, dim=0))
