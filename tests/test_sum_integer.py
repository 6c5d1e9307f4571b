"""gpuprim.sum / gpuprim.mean on integer and bool inputs: torch.sum's dtype rules, exact (wrapping)
int64 sums, casts for dtype=, mean's refusal of integer inputs, opcheck, compile, CUDA vs CPU."""
import pytest
import torch

import gpuprim
from op_checks import assert_deterministic, check_compiles, check_no_sync_and_graph_capture, run_opcheck

INT_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
SHAPES_AND_DIMS = [((), None), ((0,), None), ((7,), None), ((5, 0), 1), ((5, 0), 0), ((4, 6), 0), ((4, 6), 1),
                   ((4, 6), [0, 1]), ((3, 4, 5), [0, 2]), ((3, 4, 5), 1), ((2, 3, 4, 5), [1, 2]), ((70_000,), 0)]


def random_ints(shape, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return (torch.rand(shape, generator=g) < 0.5).to(device)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=torch.int64).to(dtype).to(device)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_matches_torch(device, dtype, keepdim):
    for shape, dim in SHAPES_AND_DIMS:
        x = random_ints(shape, dtype, device)
        ours = gpuprim.sum(x, dim, keepdim)
        theirs = torch.sum(x, dim=dim, keepdim=keepdim)
        assert ours.dtype == torch.int64 == theirs.dtype
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0)


def test_wraps_like_torch(device):
    x = torch.full((1000,), 2**62, dtype=torch.int64, device=device)
    assert gpuprim.sum(x).item() == torch.sum(x).item()  # int64 overflow wraps, as in torch
    rows = x.view(10, 100)
    torch.testing.assert_close(gpuprim.sum(rows, 1), torch.sum(rows, 1), rtol=0, atol=0)


@pytest.mark.parametrize("out_dtype", [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16,
                                       torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("in_dtype", [torch.bool, torch.int32, torch.float32], ids=str)
def test_dtype_argument(device, in_dtype, out_dtype):
    x = random_ints((6, 50), torch.int8, device).to(in_dtype) if in_dtype != torch.bool else \
        random_ints((6, 50), torch.bool, device)
    if in_dtype.is_floating_point:
        x = x / 3  # fractions: torch casts to an integer dtype first (truncation)
    for dim in (None, 1):
        ours = gpuprim.sum(x, dim, dtype=out_dtype)
        theirs = torch.sum(x, dim, dtype=out_dtype) if dim is not None else torch.sum(x, dtype=out_dtype)
        assert ours.dtype == out_dtype
        if out_dtype.is_floating_point:
            torch.testing.assert_close(ours, theirs)
        else:
            torch.testing.assert_close(ours, theirs, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_mean(device, dtype):
    x = random_ints((5, 40), dtype, device)
    with pytest.raises(TypeError, match="gpuprim.mean: x must be floating"):
        gpuprim.mean(x)
    with pytest.raises((NotImplementedError, RuntimeError)):  # torch refuses too (CPU: NotImplementedError)
        torch.mean(x)
    with pytest.raises(TypeError, match="gpuprim.mean: dtype must be"):
        gpuprim.mean(x.double(), dtype=torch.int64)
    torch.testing.assert_close(gpuprim.mean(x, 1, dtype=torch.float64), torch.mean(x, 1, dtype=torch.float64))


def test_bad_dtypes(device):
    with pytest.raises(TypeError, match="gpuprim.sum: x must be a float16, bfloat16, float32, float64, "):
        gpuprim.sum(torch.ones(3, dtype=torch.complex64, device=device))
    with pytest.raises(TypeError, match="gpuprim.sum: dtype must be"):
        gpuprim.sum(torch.ones(3, dtype=torch.int32, device=device), dtype=torch.complex64)


def test_float_input_with_integer_dtype_has_no_grad(device):
    x = torch.randn(4, 5, device=device, requires_grad=True)
    out = gpuprim.sum(x, 1, dtype=torch.int64)
    assert out.dtype == torch.int64 and not out.requires_grad


def test_opcheck_and_compile(device):
    for dtype in (torch.bool, torch.int32, torch.uint8):
        x = random_ints((6, 33), dtype, device)
        run_opcheck(torch.ops.gpuprim.sum.default, (x, None), {})
        run_opcheck(torch.ops.gpuprim.sum.default, (x, [0], True), {})
        run_opcheck(torch.ops.gpuprim.sum.default, (x, [1]), {"dtype": torch.int32})
        run_opcheck(torch.ops.gpuprim.mean.default, (x, [1]), {"dtype": torch.float32})
        check_compiles(lambda t: gpuprim.sum(t, 1) + gpuprim.sum(t), x)


def test_deterministic(device):
    x = random_ints((1 << 18,), torch.int32, device)
    assert_deterministic(lambda: (gpuprim.sum(x), gpuprim.sum(x.view(512, 512), 0)), runs=3)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_cuda_matches_cpu(dtype):
    for shape, dims in [(((1 << 24) + 3,), None), ((1000, 1001), 1), ((1001, 1000), 0), ((3, 5, 70_000), [0, 2])]:
        x = random_ints(shape, dtype, "cpu", seed=3)
        torch.testing.assert_close(gpuprim.sum(x.cuda(), dims).cpu(), gpuprim.sum(x, dims), rtol=0, atol=0)


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    x = random_ints((1 << 20,), torch.int32, "cuda")
    rows = x.view(1024, 1024)
    check_no_sync_and_graph_capture(lambda: (gpuprim.sum(x), gpuprim.sum(rows, 1), gpuprim.sum(rows, 0,
                                                                                                dtype=torch.int32)))
