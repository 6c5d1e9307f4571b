"""gpuprim.unique against torch.unique (CPU), on CPU and CUDA: exact and sized forms.

Values compare numerically (-0.0 == +0.0: which zero's bits are kept is gpuprim's rule, the first
occurrence's, checked separately) with NaNs in the same places; inverse and counts exactly.
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


def samples(device, dtype):
    g = torch.Generator().manual_seed(11)
    xs = [s.x for s in value_samples(device, dtype)]
    if dtype == torch.bool:
        return xs
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    for n, distinct in ((5000, 3), (20_001, 1000), (9001, 9001)):
        xs.append(torch.randint(0, distinct, (n,), generator=g).to(dtype).to(device))
    xs.append(torch.tensor([info.max, info.min, 0, info.max, info.min], dtype=dtype, device=device))  # limits
    low = 0 if dtype == torch.uint8 else -50
    xs.append(torch.arange(low, low + 100).flip(0).to(dtype).to(device))  # all distinct
    if dtype.is_floating_point:
        nan, inf = float("nan"), float("inf")
        xs.append(torch.tensor([1.0, nan, -0.0, 0.0, nan, 1.0, -nan, -inf, inf, 0.0], dtype=dtype, device=device))
        xs.append(torch.full((7,), nan, dtype=dtype, device=device))
    return xs


def reference(x):
    return torch.unique(x.cpu(), sorted=True, return_inverse=True, return_counts=True)


def check(x, values, inverse, counts):
    ref_values, ref_inverse, ref_counts = reference(x)
    assert values.dtype == x.dtype and values.device == x.device
    torch.testing.assert_close(values.cpu(), ref_values, equal_nan=True, rtol=0, atol=0)
    assert inverse.shape == x.shape and torch.equal(inverse.cpu(), ref_inverse)
    assert torch.equal(counts.cpu(), ref_counts)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matches_torch_unique(device, dtype):
    for x in samples(device, dtype):
        values, inverse, counts = gpuprim.unique(x, return_inverse=True, return_counts=True)
        check(x, values, inverse, counts)
        unsorted = gpuprim.unique(x, sorted=False)  # always ascending, as torch.unique
        torch.testing.assert_close(unsorted.cpu(), values.cpu(), equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool, torch.uint8), ids=str)
def test_sized_form(device, dtype):
    for x in samples(device, dtype):
        ref_values, ref_inverse, ref_counts = reference(x)
        k = ref_values.numel()
        for size in sorted({0, 1, max(k - 1, 0), k, k + 5}):
            values, inverse, counts, num = gpuprim.unique(
                x, return_inverse=True, return_counts=True, size=size, fill_value=1
            )
            assert values.shape == (size,) and counts.shape == (size,) and num.shape == (1,)
            assert int(num) == k  # the true count, even when it exceeds size
            m = min(size, k)
            torch.testing.assert_close(values[:m].cpu(), ref_values[:m], equal_nan=True, rtol=0, atol=0)
            assert torch.equal(counts[:m].cpu(), ref_counts[:m])
            assert bool((values[m:] == 1).all()) and bool((counts[m:] == 0).all())
            assert torch.equal(inverse.cpu(), ref_inverse)


def test_zero_sign_and_nan_rules(device):
    x = torch.tensor([0.0, -0.0, float("nan"), 2.0, float("nan")], device=device)
    values, inverse, counts = gpuprim.unique(x, return_inverse=True, return_counts=True)
    assert torch.signbit(values[0]).item() is False  # the first occurrence's zero
    assert inverse.tolist() == [0, 0, 2, 1, 3] and counts.tolist() == [2, 1, 1, 1]
    y = torch.tensor([-0.0, 0.0], device=device)
    assert torch.signbit(gpuprim.unique(y)[0]).item() is True


def test_default_fill_and_only_values(device):
    x = torch.tensor([5, 3, 5], device=device)
    values, num = gpuprim.unique(x, size=4)
    assert values.tolist() == [3, 5, 0, 0] and int(num) == 2
    assert gpuprim.unique(x).tolist() == [3, 5]
    values, counts = gpuprim.unique(x, return_counts=True)
    assert values.tolist() == [3, 5] and counts.tolist() == [1, 2]


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool, torch.float16), ids=str)
def test_opcheck(device, dtype):
    for x in samples(device, dtype)[:8]:
        if opcheck_sample_ok(x):
            run_opcheck(torch.ops.gpuprim.unique.default, (x,), {"return_inverse": True, "return_counts": True})
            run_opcheck(torch.ops.gpuprim.unique.default, (x,), {"size": 7, "fill_value": 2})


def test_not_differentiable(device):
    x = torch.tensor([1.0, 1.0, 2.0], device=device, requires_grad=True)
    values = gpuprim.unique(x, size=3)[0]
    with pytest.raises(RuntimeError):
        values.sum().backward()


def test_deterministic(device):
    x = torch.randint(0, 1000, (100_003,), device=device)
    assert_deterministic(lambda: gpuprim.unique(x, return_inverse=True, return_counts=True, size=2000), runs=3)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_sized(device, dynamic):
    def f(x):
        values, inverse, counts, num = gpuprim.unique(x + 1, return_inverse=True, return_counts=True, size=64)
        return values * 2, inverse, counts, num

    for n in (300, 1001):
        check_compiles(f, torch.randint(0, 50, (n,), device=device), dynamic=dynamic)


def test_bad_arguments(device):
    x = torch.tensor([1, 2], device=device)
    with pytest.raises(ValueError, match="gpuprim.unique: size must be non-negative, got -1"):
        gpuprim.unique(x, size=-1)
    with pytest.raises(TypeError, match="gpuprim.unique: x must be a floating-point, integer or bool"):
        gpuprim.unique(torch.zeros(3, dtype=torch.complex64, device=device))
    with pytest.raises(ValueError, match="gpuprim.unique: dim must be None"):
        gpuprim.unique(x, dim=0)
    with pytest.raises(TypeError, match="gpuprim.unique: size must be an integer"):
        gpuprim.unique(x, size=2.5)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu(dtype):
    for x in samples("cpu", dtype):
        for size in (None, 3):
            cpu = gpuprim.unique(x, return_inverse=True, return_counts=True, size=size)
            cuda = gpuprim.unique(x.cuda(), return_inverse=True, return_counts=True, size=size)
            for a, b in zip(cpu, cuda):
                assert_bitwise_equal(a, b.cpu(), f"{dtype} n={x.numel()} size={size}")


@pytest.mark.gpu
def test_cuda_large():
    g = torch.Generator().manual_seed(3)
    for n, distinct in ((1 << 22, 1 << 10), ((1 << 24) + 777, 1 << 20)):
        x = torch.randint(-distinct, distinct, (n,), generator=g, dtype=torch.int32)
        values, inverse, counts = gpuprim.unique(x.cuda(), return_inverse=True, return_counts=True)
        check(x.cuda(), values, inverse, counts)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", (torch.int32, torch.int64), ids=str)
def test_cuda_hash_and_sort_paths_agree(dtype):
    """The exact form of >= 2^20 int32/int64 elements takes the hash path (few distinct) or gives up (many); the
    sized form always sorts. Same bits, and equal to torch, including the dtype's minimum (the free marker)."""
    g = torch.Generator().manual_seed(8)
    info = torch.iinfo(dtype)
    for n, distinct in (((1 << 20) + 3, 1), ((1 << 20) + 3, 1000), ((1 << 20) + 3, 1 << 16), (3 << 20, 1 << 30)):
        # The last case has ~3M distinct values: past the hash path's 2^21, it gives up and sorts.
        x = torch.randint(-distinct, distinct, (n,), generator=g).to(dtype)
        x[::97] = info.min
        x[5] = info.max
        cuda = x.cuda()
        exact = gpuprim.unique(cuda, return_inverse=True, return_counts=True)
        check(cuda, *exact)
        k = exact[0].numel()
        for size in (k, n):
            values, inverse, counts, num = gpuprim.unique(cuda, return_inverse=True, return_counts=True, size=size)
            assert int(num) == k
            assert_bitwise_equal(values[:k], exact[0], f"values distinct={distinct} size={size}")
            assert_bitwise_equal(inverse, exact[1], "inverse")
            assert_bitwise_equal(counts[:k], exact[2], "counts")
        assert_deterministic(lambda: gpuprim.unique(cuda, return_inverse=True, return_counts=True), runs=2)
        only = gpuprim.unique(cuda)  # the hash path without inverse or counts
        assert_bitwise_equal(only, exact[0], "values alone")
        _, counts_only = gpuprim.unique(cuda, return_counts=True)  # counts from ranks in scratch
        assert_bitwise_equal(counts_only, exact[2], "counts alone")


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randint(0, 100, (300_000,), device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.unique(x, return_inverse=True, return_counts=True, size=128))
    check_no_sync_and_graph_capture(lambda: gpuprim.unique(x[::3], size=16))  # non-contiguous, size < count
    e = torch.zeros(0, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.unique(e, return_counts=True, size=4))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    n = 2**31 + 5
    x = torch.zeros(n, dtype=torch.uint8, device="cuda")
    x[2**31 - 3:2**31 + 2] = 7
    x[-1] = 9
    values, counts, num = gpuprim.unique(x, return_counts=True, size=4)
    assert int(num) == 3 and values.tolist() == [0, 7, 9, 0] and counts.tolist() == [n - 6, 5, 1, 0]
