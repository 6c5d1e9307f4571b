"""gpuprim.segment_reduce in torch's batched form: offsets [*batch, S + 1] (or lengths [*batch, S]) for data
[*batch, N, ...] with axis = the batch ndim, against torch.segment_reduce (torch._segment_reduce): outputs,
initial, empty segments, float64 gradients; errors, validate mode, compile; CUDA against the CPU."""
import itertools

import pytest
import torch

import gpuprim
from op_checks import assert_deterministic, check_compiles, check_no_sync_and_graph_capture

REDUCES = ("sum", "mean", "max", "min", "prod")


def _lengths(batch, segments, n, seed=0):
    """Random lengths [*batch, segments] whose rows sum to n, with empty segments."""
    g = torch.Generator().manual_seed(seed)
    rows = 1
    for b in batch:
        rows *= b
    out = torch.zeros(rows, segments, dtype=torch.int64)
    for r in range(rows):
        cuts = torch.sort(torch.randint(0, n + 1, (segments - 1,), generator=g)).values
        bounds = torch.cat([torch.tensor([0]), cuts, torch.tensor([n])])
        out[r] = bounds[1:] - bounds[:-1]
    return out.view(*batch, segments)


def _offsets(lengths):
    return torch.cat([lengths.new_zeros(lengths.shape[:-1] + (1,)), lengths.cumsum(-1)], -1)


def _data(shape, dtype=torch.float64, seed=1):
    g = torch.Generator().manual_seed(seed)
    # Away from 0 so that prod's gradient (out / x) is well conditioned.
    x = torch.rand(shape, generator=g, dtype=torch.float64) + 0.5
    return x.to(dtype)


SHAPES = [  # (batch, n, trailing, segments)
    ((3,), 7, (), 4),
    ((2,), 5, (3,), 3),
    ((2, 3), 6, (2,), 5),
    ((4,), 0, (), 2),   # no rows: every segment empty
    ((0,), 4, (), 3),   # no batch rows
]


def _torch_fill(out, reduce):
    """torch's empty segments (no initial): nan for mean, -inf/inf for max/min; gpuprim gives 0 (README)."""
    return out.nan_to_num(0.0, 0.0, 0.0) if reduce in ("mean", "max", "min") else out


@pytest.mark.parametrize("batch,n,trailing,segments", SHAPES)
@pytest.mark.parametrize("form", ("lengths", "offsets"))
def test_matches_torch(device, batch, n, trailing, segments, form):
    data = _data(batch + (n,) + trailing)
    lengths = _lengths(batch, segments, n)
    axis = len(batch)
    for reduce, initial, index_dtype in itertools.product(REDUCES, (None, 0.5, 2.0), (torch.int64, torch.int32)):
        given = lengths if form == "lengths" else _offsets(lengths)
        kwargs = {form: given.to(index_dtype), "axis": axis}
        if initial is not None:
            kwargs["initial"] = initial
        if data.numel() == 0 and n > 0:  # torch's kernel fails on an empty batch; the answer is empty
            expected = data.new_zeros(batch + (segments,) + trailing)
        else:
            expected = torch.segment_reduce(data, reduce, **kwargs)
        if initial is None:
            expected = _torch_fill(expected, reduce)
        kwargs[form] = kwargs[form].to(device)
        ours = gpuprim.segment_reduce(data.to(device), reduce, **kwargs)
        assert ours.shape == expected.shape and ours.is_contiguous()
        torch.testing.assert_close(ours.cpu(), expected, rtol=1e-12, atol=1e-12,
                                   msg=lambda m: f"{reduce} initial={initial} {index_dtype}: {m}")


@pytest.mark.parametrize("batch,n,trailing,segments", SHAPES[:3])
def test_gradients_match_torch(device, batch, n, trailing, segments):
    lengths = _lengths(batch, segments, n, seed=3)
    for reduce in REDUCES:
        grads = []
        for fn, dev in ((torch.segment_reduce, "cpu"), (gpuprim.segment_reduce, device)):
            x = _data(batch + (n,) + trailing, seed=4).to(dev).requires_grad_()
            out = fn(x, reduce, lengths=lengths.to(dev), axis=len(batch), initial=1.0)  # initial: no inf fills
            g = torch.Generator().manual_seed(5)
            out.backward(torch.randn(out.shape, generator=g, dtype=torch.float64).to(dev))
            grads.append(x.grad.cpu())
        torch.testing.assert_close(grads[1], grads[0], rtol=1e-12, atol=1e-12, msg=lambda m: f"{reduce}: {m}")


def test_gradcheck(device):
    lengths = _lengths((2,), 3, 5, seed=6).to(device)
    x = _data((2, 5, 2), seed=7).to(device).requires_grad_()
    for reduce in REDUCES:
        assert torch.autograd.gradcheck(lambda t: gpuprim.segment_reduce(t, reduce, lengths=lengths, axis=1), (x,))


def test_negative_axis_and_gpuprim_form(device):
    """axis counted from the end, and offsets passed positionally (gpuprim's form) with dim = the batch ndim."""
    data = _data((3, 6, 2)).to(device)
    offsets = _offsets(_lengths((3,), 4, 6)).to(device)
    expected = gpuprim.segment_reduce(data, "sum", offsets=offsets, axis=1)
    torch.testing.assert_close(gpuprim.segment_reduce(data, "sum", offsets=offsets, axis=-2), expected)
    torch.testing.assert_close(gpuprim.segment_reduce(data, offsets, "sum", 1), expected)
    # Each batch row on its own through the 1-D form gives the same rows.
    for b in range(3):
        torch.testing.assert_close(gpuprim.segment_reduce(data[b], offsets[b], "sum"), expected[b], rtol=0, atol=0)


def test_unsafe_ignores_rows_past_each_rows_last_offset(device):
    data = _data((2, 6)).to(device)
    lengths = torch.tensor([[2, 1], [0, 4]], device=device)  # rows 3.. and 4.. belong to no segment
    out = gpuprim.segment_reduce(data, "sum", lengths=lengths, axis=1, unsafe=True)
    expected = torch.stack([torch.stack([data[0, :2].sum(), data[0, 2:3].sum()]),
                            torch.stack([data.new_zeros(()), data[1, :4].sum()])])
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)


def test_errors(device):
    data = _data((2, 5, 3)).to(device)
    lengths = torch.tensor([[2, 3], [5, 0]], device=device)
    with pytest.raises(ValueError, match=r"gpuprim.segment_reduce: dim \(axis\) must be offsets.dim\(\) - 1 = 1 "
                       r"with 2-D \(batched\) offsets / lengths, got 0"):
        gpuprim.segment_reduce(data, "sum", lengths=lengths, axis=0)
    with pytest.raises(ValueError, match=r"offsets / lengths must have src's leading dims \(2,\), got \(1,\)"):
        gpuprim.segment_reduce(data, "sum", lengths=lengths[:1], axis=1)
    with pytest.raises(ValueError, match="src must have more than 2 dims with 3-D offsets, got 1"):
        gpuprim.segment_reduce(data[0, 0], "sum", offsets=torch.zeros(1, 1, 2, dtype=torch.long, device=device),
                               axis=2)
    gpuprim.set_validate(True)
    with pytest.raises(ValueError, match=r"gpuprim.segment_reduce: offsets\[-1\] must be src.size\(1\) = 5, got 4"):
        gpuprim.segment_reduce(data, "sum", lengths=torch.tensor([[2, 3], [4, 0]], device=device), axis=1)
    gpuprim.set_validate(False)


def test_compiles(device):
    data = _data((3, 7, 2), dtype=torch.float32).to(device)
    offsets = _offsets(_lengths((3,), 4, 7)).to(device)
    for reduce in ("sum", "max", "mean"):
        check_compiles(lambda x, o: gpuprim.segment_reduce(x, reduce, offsets=o, axis=1, initial=1.0), data, offsets)
    check_compiles(lambda x, o: gpuprim.segment_reduce(x, "sum", lengths=o, axis=1), data,
                   _lengths((3,), 4, 7).to(device), dynamic=True)


def test_deterministic(device):
    data = _data((4, 3000, 3), dtype=torch.float32).to(device)
    lengths = _lengths((4,), 5, 3000).to(device)
    assert_deterministic(lambda: gpuprim.segment_reduce(data, "sum", lengths=lengths, axis=1))


# ---------------------------------------------------------------- CUDA
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16, torch.float32, torch.float64))
def test_cuda_matches_cpu(dtype):
    tol = {torch.float16: 1e-2, torch.bfloat16: 5e-2, torch.float32: 1e-5, torch.float64: 1e-12}[dtype]
    for (batch, n, trailing, segments), reduce in itertools.product(SHAPES, REDUCES):
        data = _data(batch + (n,) + trailing, dtype)
        lengths = _lengths(batch, segments, n)
        cpu = gpuprim.segment_reduce(data, reduce, lengths=lengths, axis=len(batch), initial=1.0)
        cuda = gpuprim.segment_reduce(data.cuda(), reduce, lengths=lengths.cuda(), axis=len(batch), initial=1.0)
        torch.testing.assert_close(cuda.cpu(), cpu, rtol=tol, atol=tol, msg=lambda m: f"{batch} {reduce}: {m}")


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    data = _data((8, 4096, 16), torch.float32).cuda()
    lengths = _lengths((8,), 33, 4096).cuda()
    for reduce in REDUCES:
        check_no_sync_and_graph_capture(
            lambda: gpuprim.segment_reduce(data, reduce, lengths=lengths, axis=1, initial=0.5))
    x = data.detach().requires_grad_()
    grad = torch.randn(8, 33, 16, device="cuda")
    check_no_sync_and_graph_capture(lambda: torch.autograd.grad(
        gpuprim.segment_reduce(x, "max", lengths=lengths, axis=1), x, grad)[0])
