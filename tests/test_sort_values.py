"""gpuprim.sort_values against gpuprim.sort's values and torch.sort(stable=True).values, on CPU and CUDA.

Values are compared bitwise (bit copies of the input: NaN payloads and the sign of zero survive, in the
stable sort's order). One int32 / int64 row takes CUDA's keys-only radix sort; the rest sort's path.
"""
import pytest
import torch
from test_sort import dims_of, reference_sort  # the stable reference (float64 / int64 sort, x's own bits)

import gpuprim
from op_checks import (
    assert_bitwise_equal,
    assert_deterministic,
    check_compiled_backward,
    check_compiles,
    check_no_sync_and_graph_capture,
    opcheck_sample_ok,
    run_opcheck,
)
from samples import FLOAT_DTYPES, INT_DTYPES, value_samples

DTYPES = FLOAT_DTYPES + INT_DTYPES + (torch.bool,)


def check_sort_values(x, dim, descending):
    values = gpuprim.sort_values(x, dim, descending=descending)
    assert values.dtype == x.dtype and values.shape == x.shape and values.device == x.device
    assert values.is_contiguous()
    expected = reference_sort(x, dim, descending)[0].cpu()
    assert_bitwise_equal(values.cpu(), expected, f"dim {dim} descending {descending}")
    assert_bitwise_equal(values, gpuprim.sort(x, dim, descending=descending)[0], "vs gpuprim.sort's values")
    return values


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_matches_reference(device, dtype, descending):
    for sample in value_samples(device, dtype):
        for dim in dims_of(sample.x):
            check_sort_values(sample.x, dim, descending)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_nan_payloads_and_zeros_keep_input_order(device, dtype):
    bits_dtype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[torch.finfo(dtype).bits // 8]
    x = torch.tensor([1.0, float("nan"), -0.0, 0.0, float("-inf"), -2.0, -0.0, float("inf"), 0.0, 3.0] * 5,
                     dtype=dtype)
    raw = x.view(bits_dtype)
    raw[1] = raw[1] | torch.tensor(1, dtype=bits_dtype)  # a NaN with a different payload
    raw[11] = raw[11] | torch.tensor(torch.iinfo(bits_dtype).min, dtype=bits_dtype)  # a "-NaN"
    for descending in (False, True):
        check_sort_values(x.to(device), 0, descending)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_integer_rows_extremes_and_ties(device, dtype):
    """The keys-only path on CUDA: one row (also with other dims of size 1), extremes, many ties."""
    g = torch.Generator().manual_seed(5)
    info = torch.iinfo(dtype)
    for n in (2, 3, 2049, 100_003):
        x = torch.randint(-20, 20, (n,), generator=g).to(dtype)
        x[::97], x[1::89] = info.min, info.max
        x = x.to(device)
        for view in (x, x.reshape(1, n, 1), x[1::3]):
            for dim in dims_of(view):
                for descending in (False, True):
                    check_sort_values(view, dim, descending)


def test_bitwise_reproducible(device):
    g = torch.Generator().manual_seed(2)
    ints = torch.randint(-50, 50, (300_001,), generator=g, dtype=torch.int32).to(device)
    assert_deterministic(lambda: gpuprim.sort_values(ints), runs=3)
    floats = torch.randint(-50, 50, (64, 999), generator=g).float().to(device)
    assert_deterministic(lambda: gpuprim.sort_values(floats, 0, descending=True), runs=3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64, torch.bool], ids=str)
def test_opcheck(device, dtype):
    for sample in value_samples(device, dtype):
        if sample.name in ("ragged9001", "long_rows", "constant") or not opcheck_sample_ok(sample.x):
            continue
        run_opcheck(torch.ops.gpuprim.sort_values.default, (sample.x, -1), {"descending": True})


def test_opcheck_with_grad(device):
    x = torch.randn(5, 40, device=device, dtype=torch.float64, requires_grad=True)
    run_opcheck(torch.ops.gpuprim.sort_values.default, (x, 1))


def test_gradcheck_and_grad_matches_torch(device):
    x = torch.randn(4, 9, device=device, dtype=torch.float64, requires_grad=True)
    for dim in (0, 1):
        for descending in (False, True):
            assert torch.autograd.gradcheck(lambda t: gpuprim.sort_values(t, dim, descending=descending), (x,))
    y = torch.randn(3, 200, device=device, requires_grad=True)
    g = torch.randn(3, 200, device=device)
    (ours,) = torch.autograd.grad(gpuprim.sort_values(y, 1), y, g)
    (theirs,) = torch.autograd.grad(torch.sort(y, dim=1, stable=True).values, y, g)
    assert torch.equal(ours, theirs)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        return gpuprim.sort_values(x + 1, 0, descending=True) * 2

    for n in (300, 1001):
        check_compiles(f, torch.randint(-9, 9, (n,), device=device, dtype=torch.int32), dynamic=dynamic)
        check_compiles(f, torch.randn(n, 3, device=device), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    def step(x):
        return (gpuprim.sort_values(x, 1) * torch.arange(50, device=x.device)).sum()

    x = torch.randn(4, 50, device=device, requires_grad=True)
    # 200 terms of either sign: inductor may sum them in another order than eager.
    bound = x.numel() * torch.finfo(torch.float32).eps * float((x.detach().abs() * 50).sum())
    check_compiled_backward(step, x, loss_atol=bound)


def test_bad_arguments(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(IndexError, match=r"gpuprim.sort_values: dim must be in \[-2, 1\], got 2"):
        gpuprim.sort_values(x, 2)
    with pytest.raises(TypeError, match="gpuprim.sort_values: x must be a floating-point, integer or bool tensor, "
                                        "got Complex"):
        gpuprim.sort_values(torch.zeros(3, dtype=torch.complex64, device=device))


def test_bad_arguments_on_meta():
    # The shape function (torch.compile's fake tensors) names the op too.
    with pytest.raises(IndexError, match=r"gpuprim.sort_values: dim must be in \[-2, 1\], got 2"):
        gpuprim.sort_values(torch.empty(3, 4, device="meta"), 2)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32], ids=str)
def test_cuda_large_against_torch(dtype):
    g = torch.Generator(device="cuda").manual_seed(1)
    if dtype.is_floating_point:
        x = torch.randn(20_000_001, device="cuda", generator=g).to(dtype)
    else:
        x = torch.randint(-(2**30), 2**30, (20_000_001,), device="cuda", generator=g).to(dtype) * 2
    for descending in (False, True):
        expected = torch.sort(x, stable=True, descending=descending).values
        assert torch.equal(gpuprim.sort_values(x, descending=descending), expected)


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    ints = torch.randint(-5, 5, (100_000,), device="cuda", dtype=torch.int64)
    check_no_sync_and_graph_capture(lambda: gpuprim.sort_values(ints))  # keys only
    check_no_sync_and_graph_capture(lambda: gpuprim.sort_values(ints.int(), descending=True))
    x = torch.randn(3, 100_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.sort_values(x, 1))  # sort's path


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    """Past 2^31 elements the int32 row takes the keys-only sort with 64-bit offsets (fits an 80 GB card)."""
    n = 2**31 + 4099
    x = torch.zeros(n, dtype=torch.int32, device="cuda")
    x[::3] = 5
    x[1::3] = -7
    values = gpuprim.sort_values(x, descending=True)
    count_five, count_zero = (n + 2) // 3, n // 3
    probes = torch.tensor([0, count_five - 1, count_five, count_five + count_zero - 1, count_five + count_zero, n - 1],
                          device="cuda")
    assert values[probes].tolist() == [5, 5, 0, 0, -7, -7]
    assert bool((values[1:] <= values[:-1]).all())
