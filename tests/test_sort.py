"""gpuprim.sort / gpuprim.argsort against a pure-PyTorch reference, on CPU and CUDA.

A stable sort has exactly one answer, so indices are compared exactly and values bitwise (the
values must be bit copies of the input elements: NaN payloads and the sign of zero survive).
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


def gather_bits(x, dim, indices):
    """torch.gather on the raw bits (CPU gather of bf16 rewrites NaN payloads)."""
    bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    return torch.gather(x.view(bits), dim, indices).view(x.dtype)


def reference_sort(x, dim, descending):
    """Readable reference: torch.sort(stable=True) of a widened copy (float64 holds every float
    exactly and orders NaN last, -0.0 == +0.0; int64 every integer), then gather x itself."""
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.long, device=x.device)
    # On the CPU, whose comparison sort puts every NaN last whatever its sign bit.
    wide = x.cpu().double() if x.is_floating_point() else x.cpu().long()
    indices = torch.sort(wide, stable=True, dim=dim, descending=descending).indices.to(x.device)
    return gather_bits(x, dim, indices), indices


def assert_sorted_permutation(values, indices, x, dim, descending):
    """Independent of torch.sort: indices permute each row, values = x at indices, and the
    values are ordered (NaN last, or first if descending) with ties in increasing index order."""
    if x.dim() == 0:
        return
    n = x.size(dim)
    counts = torch.zeros_like(indices).scatter_add_(dim, indices, torch.ones_like(indices))
    assert bool((counts == 1).all()), "indices are not a permutation of each row"
    assert_bitwise_equal(values, gather_bits(x, dim, indices), "values vs x[indices]")
    if n < 2:
        return
    wide = values.double() if values.is_floating_point() else values.long()
    a, b = wide.narrow(dim, 0, n - 1), wide.narrow(dim, 1, n - 1)
    ia, ib = indices.narrow(dim, 0, n - 1), indices.narrow(dim, 1, n - 1)
    if descending:
        a, b = b, a
        ia, ib = ib, ia  # a pair (a, b) in ascending terms; for ties, the earlier index comes first in the output
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    ordered = (a < b) | (nan_b & ~nan_a)
    tie = (a == b) | (nan_a & nan_b)
    stable = ia < ib if not descending else ia > ib
    assert bool((ordered | (tie & stable)).all()), "values are not stably ordered"


def check_sort(x, dim, descending):
    values, indices = gpuprim.sort(x, dim, descending=descending)
    assert values.dtype == x.dtype and indices.dtype == torch.int64
    assert values.shape == x.shape and indices.shape == x.shape
    assert values.device == x.device and indices.device == x.device
    assert values.is_contiguous() and indices.is_contiguous()
    ref_values, ref_indices = reference_sort(x, dim, descending)
    assert torch.equal(indices.cpu(), ref_indices.cpu()), "indices differ from the stable reference"
    assert_bitwise_equal(values, ref_values, "values")
    assert_sorted_permutation(values, indices, x, dim, descending)
    return values, indices


def dims_of(x):
    return [-1] if x.dim() <= 1 else list(range(-1, x.dim()))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_matches_reference(device, dtype, descending):
    for sample in value_samples(device, dtype):
        for dim in dims_of(sample.x):
            check_sort(sample.x, dim, descending)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_nan_payloads_signed_nan_and_zeros(device, dtype):
    """Every NaN sorts last (first if descending) whatever its sign bit; -0.0 == +0.0 keep input
    order; both keep their exact bits in values."""
    bits_dtype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[torch.finfo(dtype).bits // 8]
    x = torch.tensor([1.0, float("nan"), -0.0, 0.0, float("-inf"), -2.0, -0.0, float("inf"), 0.0, 3.0] * 7,
                     dtype=dtype)
    raw = x.view(bits_dtype)
    raw[1] = raw[1] | torch.tensor(1, dtype=bits_dtype)  # a NaN with a different payload
    raw[11] = raw[11] | torch.tensor(torch.iinfo(bits_dtype).min, dtype=bits_dtype)  # sign bit set: a "-NaN"
    assert torch.isnan(x[11]) and torch.isnan(x[1])
    x = x.to(device)
    for descending in (False, True):
        check_sort(x, 0, descending)
        check_sort(x.reshape(7, 10), 1, descending)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64], ids=str)
def test_integer_extremes(device, dtype):
    info = torch.iinfo(dtype)
    x = torch.tensor([0, info.max, info.min, -1 if info.min < 0 else 1, info.max, info.min, 1, 0], dtype=dtype)
    for descending in (False, True):
        check_sort(x.to(device), 0, descending)


def test_torch_signature(device):
    """torch.sort's and torch.argsort's positional descending and keyword stable (always stable here)."""
    x = torch.randint(-3, 3, (5, 40), device=device).float()
    expected = torch.sort(x.cpu(), stable=True, dim=1, descending=True)
    for stable in (False, True):
        values, indices = gpuprim.sort(x, 1, True, stable=stable)
        assert torch.equal(values.cpu(), expected.values) and torch.equal(indices.cpu(), expected.indices)
        assert torch.equal(gpuprim.argsort(x, 1, True, stable=stable).cpu(), expected.indices)
    assert torch.equal(gpuprim.sort_values(x, 1, True).cpu(), expected.values)


def test_argsort(device):
    x = torch.randn(6, 300, device=device)
    x[:, ::7] = 0.5  # ties
    for descending in (False, True):
        for dim in (0, 1):
            expected = torch.sort(x.cpu(), stable=True, dim=dim, descending=descending).indices
            assert torch.equal(gpuprim.argsort(x, dim, descending=descending).cpu(), expected)


@pytest.mark.parametrize("size", [1, 5000, 300_000])
def test_bitwise_reproducible(device, size):
    g = torch.Generator().manual_seed(size)
    x = torch.randint(-50, 50, (size,), generator=g).float().to(device)  # many ties
    assert_deterministic(lambda: gpuprim.sort(x), runs=3)
    rows = torch.randn(64, size // 64 + 3, generator=g).to(device)
    assert_deterministic(lambda: gpuprim.sort(rows, 1, descending=True), runs=3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.bool], ids=str)
def test_opcheck(device, dtype):
    for sample in value_samples(device, dtype):
        if sample.name in ("ragged9001", "long_rows", "constant") or not opcheck_sample_ok(sample.x):
            continue  # the first three take the same code paths as smaller samples
        for descending in (False, True):
            run_opcheck(torch.ops.gpuprim.sort.default, (sample.x, -1), {"descending": descending})


def test_opcheck_with_grad(device):
    x = torch.randn(6, 70, dtype=torch.float64, device=device, requires_grad=True)
    run_opcheck(torch.ops.gpuprim.sort.default, (x, 1), {"descending": False})
    run_opcheck(torch.ops.gpuprim.sort.default, (x, 0), {"descending": True})


@pytest.mark.parametrize("descending", [False, True])
def test_gradcheck(device, descending):
    # Distinct values: the gradient of a sort is only defined away from ties.
    x = torch.randperm(45, dtype=torch.float64).reshape(5, 9).to(device).add_(0.25).requires_grad_()
    for dim in (0, 1, -1):
        fn = lambda t: gpuprim.sort(t, dim, descending=descending)[0]  # noqa: E731
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))
    scalar = torch.tensor(1.5, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: gpuprim.sort(t)[0], (scalar,))


def test_grad_matches_torch(device):
    x = torch.randn(7, 300, dtype=torch.float32, device=device, requires_grad=True)
    g = torch.randn(7, 300, device=device)
    (ours,) = torch.autograd.grad(gpuprim.sort(x, 1, descending=True)[0], x, g)
    (theirs,) = torch.autograd.grad(torch.sort(x, stable=True, dim=1, descending=True)[0], x, g)
    assert torch.equal(ours, theirs)


def test_indices_have_no_grad(device):
    x = torch.randn(10, device=device, requires_grad=True)
    values, indices = gpuprim.sort(x)
    assert values.requires_grad and not indices.requires_grad


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        values, indices = gpuprim.sort(x * 2, 1, descending=True)
        return values + 1, indices, gpuprim.argsort(x, 0)

    check_compiles(f, torch.randn(8, 300, device=device), dynamic=dynamic)
    check_compiles(f, torch.randn(5, 17, device=device), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    def step(x):
        values, _ = gpuprim.sort(x, -1)
        return (values * torch.arange(x.size(-1), device=x.device)).sum()

    x = torch.randn(4, 100, device=device, requires_grad=True)
    check_compiled_backward(step, x)


def test_bad_arguments(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(IndexError, match=r"gpuprim.sort: dim must be in \[-2, 1\], got 2"):
        gpuprim.sort(x, 2)
    message = "gpuprim.sort: x must be a floating-point, integer or bool tensor, got Complex"
    with pytest.raises(TypeError, match=message):
        gpuprim.sort(torch.zeros(3, dtype=torch.complex64, device=device))


# ---------------------------------------------------------------- CUDA-only: every code path
# sort_cuda.cu picks a path by (rows, n, key width): rows of 33..2048 elements (or one row of
# <= 2048) -> one thread block per row (tiles of 512, 1024, 2048); one longer row -> int32 / fp32: the
# onesweep sort (prim/onesweep.cuh), others: device radix sort of the bare key (int64 ascending: of x
# itself, no encode); rows >= 2^18 long, if <= 16 of
# them or with 64-bit keys -> one radix sort per row; other rows with keys <= 32 bits -> the row
# packed above the key (32- or 64-bit composite key); the remaining 64-bit keys -> two passes (by key,
# then stably by row).

def _cuda_vs_cpu_vs_reference(x_cpu, dim, descending):
    cuda_values, cuda_indices = check_sort(x_cpu.cuda(), dim, descending)
    cpu_values, cpu_indices = gpuprim.sort(x_cpu, dim, descending=descending)
    assert torch.equal(cuda_indices.cpu(), cpu_indices)
    assert_bitwise_equal(cuda_values.cpu(), cpu_values, "CUDA vs CPU values")


def _random(shape, dtype, generator):
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype)
        flat = x.view(-1)
        if flat.numel() > 10:  # specials scattered through: NaN, +-inf, +-0, ties
            picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 50), 5), generator=generator)
            flat[picks[:, 0]] = float("nan")
            flat[picks[:, 1]] = float("inf")
            flat[picks[:, 2]] = -0.0
            flat[picks[:, 3]] = 0.0
            flat[picks[:, 4]] = 1.0
        return x
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    info = torch.iinfo(dtype)
    low, high = max(info.min, -(2**40)), min(info.max, 2**40)
    return torch.randint(low, high, shape, generator=generator, dtype=torch.int64).to(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu_every_path(dtype):
    g = torch.Generator().manual_seed(7)
    shapes = [
        (2,), (3,), (512,), (513,), (1024,), (1025,), (2048,),  # one row: block sort, every tile size
        (2049,), (4097,), (100_003,), (1_000_003,),  # one row: device radix sort (single tile, onesweep)
        (1000, 33), (300, 512), (7, 513), (9, 1024), (5, 1025), (64, 2048),  # block sort per row
        (40, 1, 77),  # block sort along a dim in the middle
        (5000, 20), (3, 2049), (3, 70_001),  # composite keys; for 64-bit keys: two passes
        (5, 300_000), (17, 262_144),  # few long rows: per-row sorts; 17 rows: composite, 64-bit keys per-row
        (70_000, 3),  # many rows: more row bits (for 16-bit keys: past a 32-bit composite)
    ]
    for shape in shapes:
        x = _random(shape, dtype, g)
        for descending in (False, True):
            _cuda_vs_cpu_vs_reference(x, -1, descending)
        if len(shape) > 1:
            _cuda_vs_cpu_vs_reference(x, 0, True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_cuda_one_long_integer_row(dtype):
    """One long int32 row (onesweep sort) / int64 row (CUB as it is): many ties, both extremes, a strided view."""
    g = torch.Generator().manual_seed(11)
    info = torch.iinfo(dtype)
    x = torch.randint(-20, 20, (100_003,), generator=g).to(dtype)
    x[::97], x[5::89] = info.min, info.max
    x = x.cuda()
    for view in (x, x[1::3]):  # the strided view made on the GPU (.cuda() of one would be contiguous)
        for descending in (False, True):
            check_sort(view, 0, descending)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32], ids=str)
def test_cuda_onesweep_rows(dtype):
    """The onesweep sort's cases: data starting off a 16-byte boundary (its histogram's vector loads), tiles
    whose keys share a digit (copied straight through), sorted and reversed input, a ragged last tile."""
    g = torch.Generator().manual_seed(5)
    n = 1_000_003
    base = _random((n + 3,), dtype, g).cuda()
    cases = [base[offset:offset + n] for offset in (1, 2, 3)]  # contiguous, data_ptr % 16 = 4, 8, 12
    cases += [torch.full((n,), 7, dtype=dtype, device="cuda"), torch.arange(n, device="cuda").to(dtype),
              torch.arange(n, 0, -1, device="cuda").to(dtype), (torch.arange(n, device="cuda") % 8).to(dtype)]
    for x in cases:
        for descending in (False, True):
            values, indices = gpuprim.sort(x, 0, descending=descending)
            expected = torch.sort(x, stable=True, descending=descending)
            assert torch.equal(indices, expected.indices)
            assert_bitwise_equal(values, expected.values, "onesweep vs torch.sort")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_views_and_dims(dtype):
    g = torch.Generator().manual_seed(3)
    x = _random((50, 40, 30), dtype, g)
    for view in (x, x.transpose(0, 2), x[:, ::3, 1:]):
        for dim in range(-3, 3):
            _cuda_vs_cpu_vs_reference(view, dim, dim % 2 == 0)


@pytest.mark.gpu
def test_cuda_large_against_torch():
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(50_000_001, device="cuda", generator=g)
    values, indices = gpuprim.sort(x)
    expected = torch.sort(x, stable=True)
    assert torch.equal(values, expected.values) and torch.equal(indices, expected.indices)
    ints = torch.randint(-1000, 1000, (4096, 8192), device="cuda", generator=g, dtype=torch.int32)
    values, indices = gpuprim.sort(ints, 1, descending=True)
    expected = torch.sort(ints, stable=True, dim=1, descending=True)
    assert torch.equal(values, expected.values) and torch.equal(indices, expected.indices)
    doubles = torch.randn(300, 20_000, device="cuda", generator=g, dtype=torch.float64)  # two-pass path
    values, indices = gpuprim.sort(doubles, 1)
    expected = torch.sort(doubles, stable=True, dim=1)
    assert torch.equal(values, expected.values) and torch.equal(indices, expected.indices)


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randn(3, 100_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.sort(x, 1))
    check_no_sync_and_graph_capture(lambda: gpuprim.sort(x.flatten(), 0, descending=True))
    ints = torch.randint(-5, 5, (100_000,), device="cuda", dtype=torch.int32)
    check_no_sync_and_graph_capture(lambda: gpuprim.sort(ints, 0, descending=True))  # straight to CUB
    d = torch.randn(500, 64, device="cuda", dtype=torch.float64)
    check_no_sync_and_graph_capture(lambda: gpuprim.sort(d, 1))  # two-pass path
    long_rows = torch.randn(2, 300_000, device="cuda", dtype=torch.float64)
    check_no_sync_and_graph_capture(lambda: gpuprim.sort(long_rows, 1))  # one radix sort per row


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    n = 2**31 + 4099
    x = torch.zeros(n, dtype=torch.int8, device="cuda")
    x[::3] = -1
    x[1::3] = 1
    values, indices = gpuprim.sort(x)  # int64 payload path
    count_neg, count_zero = (n + 2) // 3, (n + 0) // 3
    probes = torch.tensor([0, count_neg - 1, count_neg, count_neg + count_zero - 1, count_neg + count_zero, n - 1],
                          device="cuda")
    assert values[probes].tolist() == [-1, -1, 0, 0, 1, 1]
    # Stable: each run of equal values lists its positions in increasing order.
    assert indices[probes].tolist() == [0, 3 * (count_neg - 1), 2, 2 + 3 * (count_zero - 1), 1,
                                        1 + 3 * ((n - 2) // 3)]
    assert bool((values[1:] >= values[:-1]).all())


def test_no_grad_fast_path(device):
    x = torch.randn(6, 70, dtype=torch.float64, device=device)
    check_no_grad_fast_path(lambda t: gpuprim.sort(t, 1, descending=True), x)
