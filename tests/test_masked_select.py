"""gpuprim.masked_select against torch.masked_select, on CPU and CUDA: the kept elements bit for bit, exactly as
many as the mask has set (the op syncs for that); its fake kernel gives torch.compile a data-dependent size."""
import pytest
import torch
from test_compact import MASKS, bits, make_mask

import gpuprim
from op_checks import assert_bitwise_equal, check_compiles, check_no_grad_fast_path, opcheck_sample_ok, run_opcheck
from samples import FLOAT_DTYPES, INT_DTYPES, value_samples

DTYPES = FLOAT_DTYPES + INT_DTYPES + (torch.bool,)


def check_masked_select(x, mask):
    out = gpuprim.masked_select(x, mask)
    expected = torch.masked_select(bits(x), mask)
    assert out.dtype == x.dtype and out.device == x.device and out.shape == expected.shape
    assert torch.equal(bits(out).cpu(), expected.cpu()), "kept elements differ"
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", MASKS)
def test_matches_torch(device, dtype, kind):
    for sample in value_samples(device, dtype):
        check_masked_select(sample.x, make_mask(sample.x, kind))


def test_sizes_around_tiles(device):
    for n in (1, 4095, 4096, 4097, 8191, 8192, 8193, 70_001):
        x = torch.arange(n, device=device, dtype=torch.int64)
        for kind in MASKS:
            check_masked_select(x, make_mask(x, kind, seed=n))


@pytest.mark.parametrize("dtype", (torch.float32, torch.int32, torch.bool), ids=str)
def test_opcheck(device, dtype):
    for sample in value_samples(device, dtype):
        if sample.name in ("ragged9001", "long_rows", "constant") or not opcheck_sample_ok(sample.x):
            continue
        run_opcheck(torch.ops.gpuprim.masked_select.default, (sample.x, make_mask(sample.x, "random")))


def test_opcheck_requires_grad(device):
    x = torch.randn(7, 33, device=device, dtype=torch.float64, requires_grad=True)
    run_opcheck(torch.ops.gpuprim.masked_select.default, (x, make_mask(x, "random")))


def test_gradcheck_and_grad_matches_torch(device):
    for shape in ((0,), (1,), (5,), (3, 7)):
        x = torch.randn(*shape, device=device, dtype=torch.float64, requires_grad=True)
        for kind in MASKS:
            mask = make_mask(x, kind)
            assert torch.autograd.gradcheck(lambda t: gpuprim.masked_select(t, mask), (x,))
    y = torch.randn(40, 50, device=device, requires_grad=True)
    mask = make_mask(y, "random")
    g = torch.randn(int(mask.sum()), device=device)
    (ours,) = torch.autograd.grad(gpuprim.masked_select(y, mask), y, g)
    (theirs,) = torch.autograd.grad(torch.masked_select(y, mask), y, g)
    assert torch.equal(ours, theirs)


BROADCASTS = [((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 5)), ((2, 1, 5), (3, 1)), ((), (2, 3)), ((2, 3), ()),
              ((0, 4), (4,)), ((1,), (0,))]


def test_broadcast_matches_torch(device):
    for x_shape, mask_shape in BROADCASTS:
        for dtype in (torch.float64, torch.int32, torch.bool):
            x = torch.randn(x_shape, device=device).to(dtype)
            check_masked_select(x, torch.rand(mask_shape, device=device) < 0.5)


def test_broadcast_grad_and_opcheck(device):
    for x_shape, mask_shape in BROADCASTS:
        x = torch.randn(x_shape, device=device, dtype=torch.float64, requires_grad=True)
        mask = torch.rand(mask_shape, device=device) < 0.5
        assert torch.autograd.gradcheck(lambda t: gpuprim.masked_select(t, mask), (x,))
        g = torch.randn(torch.masked_select(x, mask).shape, device=device, dtype=torch.float64)
        (ours,) = torch.autograd.grad(gpuprim.masked_select(x, mask), x, g)
        (theirs,) = torch.autograd.grad(torch.masked_select(x, mask), x, g)
        torch.testing.assert_close(ours, theirs)
        if x.numel() and mask.numel():
            run_opcheck(torch.ops.gpuprim.masked_select.default, (x, mask))
    f = lambda x, mask: gpuprim.masked_select(x, mask) * 2  # noqa: E731
    check_compiles(f, torch.randn(3, 4, device=device), torch.rand(4, device=device) < 0.5)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph(device, dynamic):
    def f(x, mask):
        return gpuprim.masked_select(x * 2, mask).sum(), gpuprim.masked_select(x, mask) + 1

    for n in (300, 1001):
        x = torch.randn(n, device=device)
        check_compiles(f, x, make_mask(x, "random"), dynamic=dynamic)


def test_bad_arguments(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(ValueError, match=r"gpuprim.masked_select: mask must be broadcastable with x's shape \[3, 4\]"):
        gpuprim.masked_select(x, torch.ones(12, dtype=torch.bool, device=device))
    with pytest.raises(TypeError, match="gpuprim.masked_select: mask must be a bool tensor, got Int"):
        gpuprim.masked_select(x, torch.ones(3, 4, dtype=torch.int32, device=device))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu(dtype):
    for sample in value_samples("cpu", dtype):
        mask = make_mask(sample.x, "random")
        assert_bitwise_equal(gpuprim.masked_select(sample.x.cuda(), mask.cuda()).cpu(),
                             gpuprim.masked_select(sample.x, mask), f"{sample}")


@pytest.mark.gpu
def test_cuda_large():
    n = (1 << 24) + 12345
    x = torch.randn(n, device="cuda")
    mask = torch.rand(n, device="cuda") < 0.5
    for view_x, view_mask in ((x, mask), (x[3:], mask[3:]), (x.double(), mask)):
        check_masked_select(view_x, view_mask)


def test_no_grad_fast_path(device):
    x = torch.randn(300, dtype=torch.float64, device=device)
    mask = torch.rand(300, device=device) < 0.4
    check_no_grad_fast_path(lambda t: gpuprim.masked_select(t, mask), x)
