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


def test_exact_form_capacity(device):
    """The op's exact form holds every value x could: x.numel(), at most 256 for 1-byte dtypes (no more keys).
    Its entries past num_unique are unspecified (the CUDA hash path leaves them unwritten), so only the first k are
    compared."""
    for dtype, n, capacity in ((torch.uint8, 1000, 256), (torch.int8, 300, 256), (torch.bool, 3, 3),
                               (torch.uint8, 0, 0), (torch.int16, 300, 300)):
        x = torch.arange(n).to(dtype).to(device)
        values, _, counts, num = torch.ops.gpuprim.unique(x, return_counts=True)
        assert values.shape == (capacity,) and counts.shape == (capacity,)
        ref_values, ref_counts = torch.unique(x.cpu(), return_counts=True)
        k = int(num)
        assert k == ref_values.numel()
        assert torch.equal(values[:k].cpu(), ref_values) and torch.equal(counts[:k].cpu(), ref_counts)
    x = torch.randint(0, 256, (5000,), dtype=torch.uint8, device=device)
    run_opcheck(torch.ops.gpuprim.unique.default, (x,), {"return_inverse": True, "return_counts": True})


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool, torch.float16), ids=str)
def test_opcheck(device, dtype):
    for x in samples(device, dtype)[:8]:
        if opcheck_sample_ok(x):
            run_opcheck(torch.ops.gpuprim.unique.default, (x,), {"return_inverse": True, "return_counts": True})
            run_opcheck(torch.ops.gpuprim.unique.default, (x,), {"size": 7, "fill_value": 2})


def test_fill_value_must_fit_the_dtype(device):
    x = torch.tensor([2, 1, 2], dtype=torch.uint8, device=device)
    with pytest.raises(ValueError, match=r"gpuprim\.unique: fill_value must be representable in x's dtype Byte, "
                                         r"got 300"):
        gpuprim.unique(x, size=3, fill_value=300)
    values, num = gpuprim.unique(x, size=3, fill_value=255)
    assert values.tolist() == [1, 2, 255] and int(num) == 2


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
    with pytest.raises(IndexError, match=r"gpuprim.unique: dim must be in \[-1, 0\], got 1"):
        gpuprim.unique(x, dim=1)
    with pytest.raises(IndexError, match="gpuprim.unique: dim must be None for a 0-d x, got 0"):
        gpuprim.unique(torch.tensor(3, device=device), dim=0)
    with pytest.raises(ValueError, match="gpuprim.unique: x must be free of empty dimensions other than dim = 0"):
        gpuprim.unique(torch.zeros(3, 0, device=device), dim=0)  # torch refuses it too
    with pytest.raises(TypeError, match="gpuprim.unique: dim must be an integer"):
        gpuprim.unique(x, dim=0.5)
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
    """The exact form of >= 2^22 int32/int64 elements takes the hash path (few distinct) or gives up (many); the
    sized form always sorts. Same bits, and equal to torch, including the dtype's minimum (the free marker)."""
    g = torch.Generator().manual_seed(8)
    info = torch.iinfo(dtype)
    for n, distinct in (((1 << 22) + 3, 1), ((1 << 22) + 3, 1000), ((1 << 22) + 3, 1 << 16), (5 << 20, 1 << 30)):
        # The last case has ~5M distinct values: past the hash path's 2^21, it gives up and sorts.
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
        _, counts_only = gpuprim.unique(cuda, return_counts=True)  # a histogram over the slots, no ranks
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
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    values, counts, num = gpuprim.unique(x, return_counts=True, size=4)
    assert int(num) == 3 and values.tolist() == [0, 7, 9, 0] and counts.tolist() == [n - 6, 5, 1, 0]
    # 1-byte elements are counted by key, with no workspace that grows with n (a sort took ~36 bytes an element).
    assert torch.cuda.max_memory_allocated() - before < 64 * 2**20
    inverse = gpuprim.unique(x, return_inverse=True, size=4)[1]
    assert inverse[2**31 - 4:2**31 + 3].tolist() == [0, 1, 1, 1, 1, 1, 0] and int(inverse[-1]) == 2


@pytest.mark.gpu
@pytest.mark.slow
def test_sort_path_more_than_2pow31_elements():
    """The sort path's 64-bit positions and ranks (2-byte keys; ~40 bytes an element: a card of 100 GB or more)."""
    n = 2**31 + 5
    if torch.cuda.get_device_properties(0).total_memory < 100 * 2**30:
        pytest.skip(f"needs ~{40 * n / 2**30:.0f} GiB of GPU memory for its {n} elements")
    x = torch.zeros(n, dtype=torch.int16, device="cuda")
    x[2**31 - 3:2**31 + 2] = -7
    x[-1] = 9
    values, counts, num = gpuprim.unique(x, return_counts=True, size=4)
    assert int(num) == 3 and values.tolist() == [-7, 0, 9, 0] and counts.tolist() == [5, n - 6, 1, 0]


# ---- dim=: the slices x.select(dim, i) are the elements (torch.unique(x, dim=dim)) ----


def slice_samples(device, dtype):
    """(x, dim) pairs: 2-D and 3-D, every dim and a negative one, empty, one slice, all equal, all distinct,
    1-D, non-contiguous, the dtype's limits and (floats) zeros of both signs; no NaN (see test_dim_nan_slices)."""
    g = torch.Generator().manual_seed(29)
    high = 2 if dtype == torch.bool else 3

    def rand(*shape):
        return torch.randint(0, high, shape, generator=g).to(dtype).to(device)

    out = [(rand(200, 3), 0), (rand(3, 200), 1), (rand(200, 3), -1), (rand(50, 2), 0)]
    cube = rand(4, 5, 6)
    out += [(cube, 0), (cube, 1), (cube, 2), (cube, -2)]
    out += [(rand(0, 3), 0), (rand(3, 0), 1), (rand(2, 0, 3), 1), (rand(1, 4), 0), (rand(4, 1), 1)]
    out += [(torch.zeros(7, 3, dtype=dtype, device=device), 0), (rand(9), 0), (rand(30, 4).t(), 1),
            (rand(40, 6)[::3, 1::2], 0)]
    if dtype != torch.bool:
        low = 0 if dtype == torch.uint8 else -10
        distinct = torch.arange(low, low + 60).flip(0).reshape(20, 3).to(dtype).to(device)
        out += [(distinct, 0), (distinct, 1)]
        info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
        limits = torch.tensor([[info.max, info.min], [info.min, info.max], [info.max, info.min], [0, 0]])
        out.append((limits.to(dtype).to(device), 0))
    if dtype.is_floating_point:
        zeros = torch.tensor([[0.0, 1.0], [-0.0, 1.0], [1.0, -0.0], [1.0, 0.0], [-0.0, -0.0], [float("inf"), 0.0]])
        out += [(zeros.to(dtype).to(device), 0), (zeros.to(dtype).to(device), 1)]
    return out


def python_unique_dim(x, dim):
    """An independent reference: slices as tuples of (is NaN, value) keys, a stable sort, and equality that no slice
    holding a NaN satisfies. Returns (values, inverse, counts) as torch.unique(dim=) shapes them."""
    rows = x.cpu().movedim(dim, 0).flatten(1) if x.dim() > 1 else x.cpu().reshape(-1, 1)
    numbers = rows.double() if rows.is_floating_point() else rows.long()  # int64 exactly, not through double
    keys = [tuple((1, 0.0) if v != v else (0, v) for v in row.tolist()) for row in numbers]
    nan = [bool(torch.isnan(row).any()) for row in numbers]
    order = sorted(range(len(keys)), key=lambda i: keys[i])  # stable
    inverse = torch.zeros(len(keys), dtype=torch.int64)
    firsts, counts = [], []
    for j, i in enumerate(order):
        if j == 0 or nan[i] or keys[i] != keys[order[j - 1]]:
            firsts.append(i)
            counts.append(0)
        counts[-1] += 1
        inverse[i] = len(firsts) - 1
    values = x.cpu().index_select(dim, torch.tensor(firsts, dtype=torch.int64))
    return values, inverse, torch.tensor(counts, dtype=torch.int64)


def check_dim(x, dim, values, inverse, counts):
    ref_values, ref_inverse, ref_counts = python_unique_dim(x, dim)
    assert values.dtype == x.dtype and values.device == x.device and values.shape == ref_values.shape
    assert_bitwise_equal(values.cpu(), ref_values, f"values dim={dim} shape={tuple(x.shape)}")  # first occurrence
    assert torch.equal(inverse.cpu(), ref_inverse) and torch.equal(counts.cpu(), ref_counts)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dim_matches_torch(device, dtype):
    for x, dim in slice_samples(device, dtype):
        values, inverse, counts = gpuprim.unique(x, dim=dim, return_inverse=True, return_counts=True)
        theirs = torch.unique(x.cpu(), dim=dim, return_inverse=True, return_counts=True)
        what = f"dim={dim} shape={tuple(x.shape)}"
        torch.testing.assert_close(values.cpu(), theirs[0], rtol=0, atol=0, msg=what)  # by value: -0.0 == +0.0
        assert torch.equal(inverse.cpu(), theirs[1]) and torch.equal(counts.cpu(), theirs[2]), what
        check_dim(x, dim, values, inverse, counts)
        alone = gpuprim.unique(x, dim=dim, sorted=False)  # always sorted, as torch
        assert_bitwise_equal(alone, values, what)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.float64), ids=str)
def test_dim_nan_slices(device, dtype):
    """Each slice holding a NaN is distinct (as torch); gpuprim orders them with NaN above every number in its
    column (torch's `<` gives no total order there). The set of slices, counts and inverse agree with torch's up to
    that order."""
    nan = float("nan")
    x = torch.tensor([[1.0, 2.0], [nan, 0.0], [1.0, 2.0], [-0.0, 1.0], [0.0, 1.0], [nan, 0.0], [nan, -1.0],
                      [0.0, nan], [-nan, 0.0]], dtype=dtype, device=device)
    values, inverse, counts = gpuprim.unique(x, dim=0, return_inverse=True, return_counts=True)
    check_dim(x, 0, values, inverse, counts)
    expected = [[-0.0, 1.0], [0.0, nan], [1.0, 2.0], [nan, -1.0], [nan, 0.0], [nan, 0.0], [nan, 0.0]]
    torch.testing.assert_close(values.cpu(), torch.tensor(expected, dtype=dtype), equal_nan=True, rtol=0, atol=0)
    assert inverse.tolist() == [2, 4, 2, 0, 0, 5, 3, 1, 6] and counts.tolist() == [2, 1, 2, 1, 1, 1, 1]
    assert torch.signbit(values[0, 0]).item() is True  # the first occurrence's zero
    theirs, their_inverse, their_counts = torch.unique(x.cpu(), dim=0, return_inverse=True, return_counts=True)
    assert theirs.shape == values.shape and sorted(their_counts.tolist()) == sorted(counts.tolist())
    # Both rebuild x from values[inverse].
    for v, inv in ((values.cpu(), inverse.cpu()), (theirs, their_inverse)):
        torch.testing.assert_close(v[inv], x.cpu(), equal_nan=True, rtol=0, atol=0)
    values_t, inverse_t, counts_t = gpuprim.unique(x.t(), dim=1, return_inverse=True, return_counts=True)
    assert_bitwise_equal(values_t, values.t().contiguous(), "dim=1 of the transpose")
    assert torch.equal(inverse_t, inverse) and torch.equal(counts_t, counts)


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool, torch.uint8), ids=str)
def test_dim_sized_form(device, dtype):
    for x, dim in slice_samples(device, dtype):
        ref_values, ref_inverse, ref_counts = python_unique_dim(x, dim)
        k = ref_counts.numel()
        for size in sorted({0, 1, max(k - 1, 0), k, k + 2}):
            values, inverse, counts, num = gpuprim.unique(
                x, dim=dim, return_inverse=True, return_counts=True, size=size, fill_value=1
            )
            shape = list(x.shape)
            shape[dim] = size
            assert list(values.shape) == shape and counts.shape == (size,) and int(num) == k
            m = min(size, k)
            assert_bitwise_equal(values.narrow(dim, 0, m).cpu(), ref_values.narrow(dim, 0, m), f"size={size}")
            assert bool((values.narrow(dim, m, size - m) == 1).all()) and bool((counts[m:] == 0).all())
            assert torch.equal(counts[:m].cpu(), ref_counts[:m]) and torch.equal(inverse.cpu(), ref_inverse)


def test_dim_default_fill_and_outputs(device):
    x = torch.tensor([[5, 3], [1, 2], [5, 3]], device=device)
    values, num = gpuprim.unique(x, dim=0, size=3)
    assert values.tolist() == [[1, 2], [5, 3], [0, 0]] and int(num) == 2
    assert gpuprim.unique(x, dim=0).tolist() == [[1, 2], [5, 3]]
    values, counts = gpuprim.unique(x, dim=1, return_counts=True)
    assert values.tolist() == [[3, 5], [2, 1], [3, 5]] and counts.tolist() == [1, 1]


@pytest.mark.parametrize("dtype", (torch.float32, torch.int64, torch.bool), ids=str)
def test_dim_opcheck(device, dtype):
    for x, dim in slice_samples(device, dtype)[:12]:
        run_opcheck(torch.ops.gpuprim.unique.default, (x,), {"dim": dim, "return_inverse": True, "return_counts": True})
        run_opcheck(torch.ops.gpuprim.unique.default, (x,), {"dim": dim, "size": 5, "fill_value": 1})


def test_dim_deterministic(device):
    x = torch.randint(0, 4, (30_001, 3), device=device)
    assert_deterministic(lambda: gpuprim.unique(x, dim=0, return_inverse=True, return_counts=True, size=100), runs=3)


@pytest.mark.parametrize("dynamic", [False, True])
def test_dim_compile_sized(device, dynamic):
    def f(x):
        values, inverse, counts, num = gpuprim.unique(x + 1, dim=0, return_inverse=True, return_counts=True, size=16)
        return values * 2, inverse, counts, num

    for n in (300, 1001):
        check_compiles(f, torch.randint(0, 3, (n, 2), device=device), dynamic=dynamic)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dim_cuda_matches_cpu(dtype):
    samples_ = slice_samples("cpu", dtype)
    if dtype.is_floating_point:
        nan = float("nan")
        samples_.append((torch.tensor([[nan, 0.0], [1.0, nan], [nan, 0.0], [-0.0, 1.0]], dtype=dtype), 0))
    for x, dim in samples_:
        for size in (None, 3):
            cpu = gpuprim.unique(x, dim=dim, return_inverse=True, return_counts=True, size=size)
            cuda = gpuprim.unique(x.cuda(), dim=dim, return_inverse=True, return_counts=True, size=size)
            for a, b in zip(cpu, cuda):
                assert_bitwise_equal(a, b.cpu(), f"{dtype} shape={tuple(x.shape)} dim={dim} size={size}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", (torch.int64, torch.int32, torch.uint8, torch.float32), ids=str)
def test_dim_cuda_large(dtype):
    """Rows of several widths (one, several and a partial group of columns packed in a 64-bit key), against torch."""
    g = torch.Generator().manual_seed(4)
    for n, width, distinct in ((1 << 20, 4, 3), ((1 << 18) + 5, 3, 1000), ((1 << 16) + 1, 11, 2)):
        x = torch.randint(0, distinct, (n, width), generator=g).to(dtype)
        values, inverse, counts = gpuprim.unique(x.cuda(), dim=0, return_inverse=True, return_counts=True)
        theirs = torch.unique(x.cuda(), dim=0, return_inverse=True, return_counts=True)
        for ours, ref in zip((values, inverse, counts), theirs):
            assert torch.equal(ours, ref), f"n={n} width={width}"


@pytest.mark.gpu
def test_dim_no_sync_and_graph_capture():
    x = torch.randint(0, 3, (100_000, 3), device="cuda")
    check_no_sync_and_graph_capture(
        lambda: gpuprim.unique(x, dim=0, return_inverse=True, return_counts=True, size=64))
    check_no_sync_and_graph_capture(lambda: gpuprim.unique(x.t(), dim=1, size=8))  # non-contiguous, size < count
    e = torch.zeros(0, 3, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.unique(e, dim=0, return_counts=True, size=4))
