"""reduce='prod' of gpuprim.scatter_reduce and gpuprim.segment_reduce against torch (values, zeros in the
gradient, determinism), and segment_reduce's torch form: lengths=, axis=, initial=."""
import pytest
import torch

import gpuprim
from op_checks import assert_deterministic, check_compiles, run_opcheck

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.int64, torch.uint8]


def values(shape, dtype, device, seed, zeros=0.2):
    """Values near 1 (products stay finite), some exact zeros."""
    g = torch.Generator().manual_seed(seed)
    x = 0.5 + torch.rand(shape, generator=g, dtype=torch.float64)
    x = torch.where(torch.rand(shape, generator=g) < zeros, torch.zeros_like(x), x)
    if not dtype.is_floating_point:
        x = torch.randint(-3, 4, shape, generator=g).clamp_min(0 if dtype == torch.uint8 else -3)
    return x.to(dtype).to(device)


def close(ours, theirs):
    if ours.dtype.is_floating_point:
        rtol = 2e-2 if ours.dtype in (torch.bfloat16, torch.float16) else 1e-5
        torch.testing.assert_close(ours, theirs, equal_nan=True, rtol=rtol, atol=1e-5)
    else:
        assert torch.equal(ours, theirs)


# ---------------------------------------------------------------- scatter_reduce
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_prod_matches_torch(device, dtype, include_self):
    input = values((6, 5), dtype, device, 0)
    index = torch.randint(0, 6, (9, 4), generator=torch.Generator().manual_seed(1)).to(device)
    src = values((10, 5), dtype, device, 2)
    for deterministic in (False, True):
        with gpuprim.deterministic(deterministic):
            out = gpuprim.scatter_reduce(input, 0, index, src, "prod", include_self=include_self)
        close(out, input.scatter_reduce(0, index, src, "prod", include_self=include_self))
    mine = input.clone()
    gpuprim.scatter_reduce_(mine, 1, index[:5] % 5, src, "prod", include_self=include_self)
    close(mine, input.scatter_reduce(1, index[:5] % 5, src, "prod", include_self=include_self))


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_prod_grad_with_zeros(device, include_self):
    input = torch.tensor([[2.0, 0.0, 3.0, 0.0, 1.5]], dtype=torch.float64, device=device).T.repeat(1, 3)
    index = torch.tensor([[0, 0, 1], [0, 1, 1], [2, 2, 3], [3, 3, 3], [4, 0, 4]], device=device)
    src = torch.tensor([[0.0, 2.0, 0.0], [0.5, 0.0, 0.0], [3.0, 0.0, 4.0], [1.5, 2.5, 0.0], [0.0, 0.0, 0.7]],
                       dtype=torch.float64, device=device)
    grad = torch.randn(5, 3, dtype=torch.float64, device=device)
    a, b = input.clone().requires_grad_(), src.clone().requires_grad_()
    ours = torch.autograd.grad(gpuprim.scatter_reduce(a, 0, index, b, "prod", include_self=include_self), (a, b), grad)
    theirs = torch.autograd.grad(a.scatter_reduce(0, index, b, "prod", include_self=include_self), (a, b), grad)
    for o, t in zip(ours, theirs):
        torch.testing.assert_close(o, t)
    x = (torch.rand(5, 3, dtype=torch.float64, device=device) + 0.5).requires_grad_()
    y = (torch.rand(5, 3, dtype=torch.float64, device=device) + 0.5).requires_grad_()
    fn = lambda p, q: gpuprim.scatter_reduce(p, 0, index, q, "prod", include_self=include_self)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x, y))


def test_scatter_prod_bool_opcheck_and_compile(device):
    input = values((6, 5), torch.float32, device, 3)
    index = torch.randint(0, 6, (7, 5), generator=torch.Generator().manual_seed(4)).to(device)
    src = values((7, 5), torch.float32, device, 5)
    run_opcheck(torch.ops.gpuprim.scatter_reduce.default, (input, 0, index, src, "prod"), {"include_self": False})
    check_compiles(lambda a, b: gpuprim.scatter_reduce(a, 0, index, b, "prod") * 2, input, src)
    flags, bits = input > 0.8, src > 0.8
    for include_self in (True, False):
        # torch's CUDA scatter has no bool kernel: its CPU result is the reference
        expected = flags.cpu().scatter_reduce(0, index.cpu(), bits.cpu(), "prod", include_self=include_self)
        assert torch.equal(gpuprim.scatter_reduce(flags, 0, index, bits, "prod", include_self=include_self).cpu(),
                           expected)


# ---------------------------------------------------------------- segment_reduce
LENGTHS = [2, 0, 3, 1, 0, 4]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_segment_prod_matches_torch(device, dtype):
    data = values((10, 3), dtype, device, 6)
    lengths = torch.tensor(LENGTHS, device=device)
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
    expected = torch.segment_reduce(data, "prod", lengths=lengths)
    close(gpuprim.segment_reduce(data, offsets, "prod"), expected)
    close(gpuprim.segment_reduce(data, "prod", lengths=lengths), expected)
    close(gpuprim.segment_reduce(data, reduce="prod", offsets=offsets, axis=0), expected)
    close(gpuprim.segment_reduce(data.T, "prod", offsets=offsets, axis=1), expected.T)
    assert_deterministic(lambda: gpuprim.segment_reduce(data, offsets, "prod"))


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_initial_matches_torch(device, reduce):
    data = values((10, 3), torch.float64, device, 7)
    lengths = torch.tensor(LENGTHS, device=device)
    for initial in (2.0, -1.0, 0.0):
        close(gpuprim.segment_reduce(data, reduce, lengths=lengths, initial=initial),
              torch.segment_reduce(data, reduce, lengths=lengths, initial=initial))
    close(gpuprim.segment_reduce(data, reduce, lengths=lengths, unsafe=True),
          torch.segment_reduce(data, reduce, lengths=lengths, unsafe=True).nan_to_num(0.0, 0.0, 0.0)
          if reduce != "prod" else torch.segment_reduce(data, reduce, lengths=lengths))


@pytest.mark.parametrize("initial", [None, 2.0])
def test_segment_prod_grad_matches_torch(device, initial):
    data = torch.tensor([[2.0, 0.0], [3.0, 0.0], [0.0, 1.5], [0.5, 2.0], [0.0, 0.0], [1.25, 4.0], [0.0, 3.0]],
                        dtype=torch.float64, device=device)
    lengths = torch.tensor([2, 0, 3, 2], device=device)
    grad = torch.randn(4, 2, dtype=torch.float64, device=device)
    x = data.clone().requires_grad_()
    (ours,) = torch.autograd.grad(gpuprim.segment_reduce(x, "prod", lengths=lengths, initial=initial), x, grad)
    (theirs,) = torch.autograd.grad(torch.segment_reduce(x, "prod", lengths=lengths, initial=initial), x, grad)
    torch.testing.assert_close(ours, theirs)
    y = (torch.rand(7, 2, dtype=torch.float64, device=device) + 0.5).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: gpuprim.segment_reduce(t, "prod", lengths=lengths), (y,))


def test_segment_prod_opcheck_and_compile(device):
    data = values((10, 3), torch.float32, device, 8)
    offsets = torch.tensor([0, 2, 2, 5, 10], device=device)
    run_opcheck(torch.ops.gpuprim.segment_reduce.default, (data, offsets, "prod", 0))
    check_compiles(lambda t: gpuprim.segment_reduce(t, offsets, "prod", initial=1.5) * 2, data)
    with pytest.raises(ValueError, match="segment_reduce_backward: reduce must be"):
        torch.ops.gpuprim.segment_reduce_backward(data[:4], data, offsets, data[:4], "prod", 0)


def test_segment_argument_forms(device):
    data = torch.randn(5, 2, device=device)
    lengths = torch.tensor([2, 3], device=device)
    with pytest.raises(TypeError, match="offsets or lengths, not both"):
        gpuprim.segment_reduce(data, "sum", lengths=lengths, offsets=torch.tensor([0, 2, 5], device=device))
    with pytest.raises(TypeError, match="offsets \\(or lengths\\) is required"):
        gpuprim.segment_reduce(data, "sum")
    with pytest.raises(TypeError, match="reduce given twice"):
        gpuprim.segment_reduce(data, "sum", "max", lengths=lengths)
