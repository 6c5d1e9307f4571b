"""gpuprim.embedding_bag's max_norm / norm_type / scale_grad_by_freq (and gpuprim.nn.EmbeddingBag's) against
torch.nn.functional.embedding_bag: the in-place renorm of the looked-up rows, the output, and the float64
gradients divided by each row's count; torch's errors; opcheck, compile, determinism; CUDA against the CPU."""
import itertools

import pytest
import torch
import torch.nn.functional as F

import gpuprim
from op_checks import (
    assert_bitwise_equal,
    assert_deterministic,
    check_compiles,
    check_no_sync_and_graph_capture,
    run_opcheck,
)
from samples import INDEX_DTYPES

NUM_EMBEDDINGS, DIM = 20, 7
LAYOUTS = ("mixed", "hot", "two_d", "empty_input")


def _layout(name, seed=0):
    """(indices, offsets or None): duplicates within and across bags, empty bags, a hot row, 2-D."""
    g = torch.Generator().manual_seed(seed)
    if name == "mixed":
        idx = torch.randint(0, NUM_EMBEDDINGS, (30,), generator=g)
        idx[3] = idx[4] = idx[5] = idx[20] = 2  # the padding row below appears too
        return idx, torch.tensor([0, 0, 4, 9, 9, 17, 25, 30])
    if name == "hot":  # one row far past the backward's chunk size (the hot-run path), every row once
        idx = torch.cat([torch.arange(NUM_EMBEDDINGS), torch.full((3000,), 3), torch.full((7,), 11)])
        return idx[torch.randperm(idx.numel(), generator=g)], torch.tensor([0, 1000, 1000, 2500])
    if name == "two_d":
        return torch.randint(0, NUM_EMBEDDINGS, (6, 4), generator=g), None
    if name == "empty_input":
        return torch.zeros(0, dtype=torch.long), torch.tensor([0, 0])
    raise ValueError(name)


def _weight(dtype=torch.float64, seed=1, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    # Row norms spread around 1 so that max_norm=1 renormalizes some rows and leaves the others.
    w = torch.randn(NUM_EMBEDDINGS, DIM, generator=g, dtype=torch.float64) * scale
    w *= torch.linspace(0.1, 0.8, NUM_EMBEDDINGS, dtype=torch.float64).unsqueeze(1)
    return w.to(dtype)


def _grad_out(out, seed=7):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(out.shape, generator=g, dtype=torch.float64).to(out.dtype).to(out.device)


def _run(fn, weight, psw=None):
    """fn(w, p) on fresh leaves: (out, grad_weight dense, grad_psw, the weight's values afterwards)."""
    w = weight.detach().clone().requires_grad_()
    p = None if psw is None else psw.detach().clone().requires_grad_()
    out = fn(w, p)
    out.backward(_grad_out(out))
    gw = w.grad.to_dense() if w.grad.is_sparse else w.grad
    return out.detach(), gw, None if p is None else p.grad, w.detach()


# ---------------------------------------------------------------- scale_grad_by_freq
def _by_freq(grad_weight, idx, padding=None):
    """torch's documented scale_grad_by_freq: each row's gradient over its count among the used indices.

    The reference is torch's unscaled gradient divided here, not torch's flag: torch's CPU kernel (2.11, 2.13)
    divides a row that sorts after a repeated one by that row's count (pytorch/pytorch#190063); torch's CUDA
    kernel and its fixed CPU kernel compute this."""
    used = idx.reshape(-1)
    if padding is not None:
        used = used[used != padding]
    counts = torch.bincount(used, minlength=grad_weight.size(0)).clamp(min=1)
    return grad_weight / counts.to(grad_weight.dtype).unsqueeze(1)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_scale_grad_by_freq_matches_torch(device, layout, index_dtype):
    idx, offsets = _layout(layout)
    for mode, padding, psw_on in itertools.product(("sum", "mean"), (None, 2), (False, True)):
        if psw_on and mode != "sum":
            continue
        psw = torch.randn(idx.shape, dtype=torch.float64) if psw_on else None
        out, grad_weight, grad_psw, _ = _run(lambda w, p: F.embedding_bag(
            idx, w, offsets, mode=mode, per_sample_weights=p, padding_idx=padding), _weight(), psw)
        ref = (out, _by_freq(grad_weight, idx, padding), grad_psw)
        i, o = idx.to(device, index_dtype), None if offsets is None else offsets.to(device, index_dtype)
        for sparse in (False, True):  # torch's backward refuses sparse with it: compared with its dense gradient
            ours = _run(lambda w, p: gpuprim.embedding_bag(w, i, o, mode, p, padding, sparse=sparse,
                                                           scale_grad_by_freq=True),
                        _weight().to(device), None if psw is None else psw.to(device))
            for name, a, b in zip(("out", "grad_weight", "grad_psw"), ours, ref):
                if b is not None:
                    torch.testing.assert_close(a.cpu(), b, rtol=1e-12, atol=1e-12,
                                               msg=lambda m: f"{mode} padding={padding} sparse={sparse} {name}: {m}")


def test_scale_grad_by_freq_errors_as_torch(device):
    idx, offsets = (t.to(device) for t in _layout("mixed"))
    w = _weight().to(device)
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient by the frequency"):
        F.embedding_bag(idx.cpu(), w.cpu(), offsets.cpu(), mode="max", scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="gpuprim.embedding_bag: scale_grad_by_freq must be False with mode='max', "
                       "got True"):
        gpuprim.embedding_bag(w, idx, offsets, "max", scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="scale_grad_by_freq must be False with mode='max'"):
        gpuprim.nn.EmbeddingBag(NUM_EMBEDDINGS, DIM, mode="max", scale_grad_by_freq=True).to(device)(idx, offsets)


def test_scale_grad_by_freq_off_is_unchanged(device):
    """The default path's gradient is bitwise the same with the argument given as False."""
    idx, offsets = (t.to(device) for t in _layout("hot"))
    a = _run(lambda w, p: gpuprim.embedding_bag(w, idx, offsets, "mean"), _weight(torch.float32).to(device))
    b = _run(lambda w, p: gpuprim.embedding_bag(w, idx, offsets, "mean", scale_grad_by_freq=False),
             _weight(torch.float32).to(device))
    assert_bitwise_equal(a[1], b[1], "grad_weight")


# ---------------------------------------------------------------- max_norm
@pytest.mark.parametrize("norm_type", (2.0, 1.0, 3.0, float("inf")))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_max_norm_matches_torch(device, layout, norm_type):
    idx, offsets = _layout(layout)
    for mode, padding in itertools.product(("sum", "mean", "max"), (None, 2)):
        ref = _run(lambda w, p: F.embedding_bag(idx, w, offsets, max_norm=1.0, norm_type=norm_type, mode=mode,
                                                padding_idx=padding), _weight(scale=3.0))
        i, o = idx.to(device), None if offsets is None else offsets.to(device)
        ours = _run(lambda w, p: gpuprim.embedding_bag(w, i, o, mode, padding_idx=padding, max_norm=1.0,
                                                       norm_type=norm_type), _weight(scale=3.0).to(device))
        for name, a, b in zip(("out", "grad_weight", "grad_psw", "weight"), ours, ref):
            if b is not None:
                torch.testing.assert_close(a.cpu(), b, rtol=1e-12, atol=1e-12,
                                           msg=lambda m: f"{mode} padding={padding} {name}: {m}")


def test_max_norm_renorms_only_looked_up_rows(device):
    idx, offsets = torch.tensor([1, 5, 5, 9], device=device), torch.tensor([0, 2], device=device)
    w = _weight(scale=10.0).to(device)
    before = w.clone()
    gpuprim.embedding_bag(w, idx, offsets, "sum", max_norm=0.5)
    touched = torch.zeros(NUM_EMBEDDINGS, dtype=torch.bool, device=device)
    touched[idx] = True
    assert_bitwise_equal(w[~touched], before[~touched], "rows not looked up")
    norms = torch.linalg.vector_norm(w[touched], dim=1)
    assert bool((norms <= 0.5).all()) and bool((norms > 0.5 - 1e-6).all())
    ref = before.cpu().clone()
    torch.embedding_renorm_(ref, idx.cpu(), 0.5, 2.0)
    torch.testing.assert_close(w.cpu(), ref, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.bfloat16))
def test_max_norm_low_precision(device, dtype):
    """fp32 math for 16-bit rows (torch: the row's dtype), rounded once: within the dtype's rounding."""
    idx, offsets = _layout("mixed")
    tol = {torch.float32: 1e-6, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype]
    w_ref = _weight(dtype, scale=3.0)
    ref = F.embedding_bag(idx, w_ref, offsets, max_norm=1.0, mode="sum")
    w = _weight(dtype, scale=3.0).to(device)
    out = gpuprim.embedding_bag(w, idx.to(device), offsets.to(device), "sum", max_norm=1.0)
    torch.testing.assert_close(w.cpu(), w_ref, rtol=tol, atol=tol)
    torch.testing.assert_close(out.cpu(), ref, rtol=4 * tol, atol=4 * tol)


def test_module_matches_torch(device):
    """gpuprim.nn.EmbeddingBag with both options: the same weights after the renorm, output and gradients."""
    torch.manual_seed(0)
    kwargs = dict(max_norm=1.5, norm_type=2.0, mode="mean", padding_idx=0, dtype=torch.float64)
    ref = torch.nn.EmbeddingBag(NUM_EMBEDDINGS, DIM, **kwargs)  # its gradient scaled by _by_freq below
    ours = gpuprim.nn.EmbeddingBag(NUM_EMBEDDINGS, DIM, scale_grad_by_freq=True, **kwargs)
    ours.load_state_dict(ref.state_dict())
    ours = ours.to(device)
    idx, offsets = _layout("mixed")
    out_ref = ref(idx, offsets)
    out = ours(idx.to(device), offsets.to(device))
    torch.testing.assert_close(out.cpu(), out_ref.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ours.weight.detach().cpu(), ref.weight.detach(), rtol=1e-12, atol=1e-12)
    out_ref.backward(_grad_out(out_ref))
    out.backward(_grad_out(out).to(device))
    torch.testing.assert_close(ours.weight.grad.cpu(), _by_freq(ref.weight.grad, idx, padding=0), rtol=1e-12,
                               atol=1e-12)


def test_renorm_keeps_autograd_history_clean(device):
    """The renorm runs under no_grad on a leaf that requires grad (torch's rule), bumping no autograd graph."""
    w = _weight(scale=3.0).to(device).requires_grad_()
    out = gpuprim.embedding_bag(w, torch.tensor([1, 2], device=device), torch.tensor([0], device=device), "sum",
                                max_norm=1.0)
    assert w.is_leaf and w.grad_fn is None and out.grad_fn is not None
    out.sum().backward()
    assert w.grad is not None


# ---------------------------------------------------------------- torch.library / compile / determinism
def test_opcheck(device):
    idx, offsets = (t.to(device) for t in _layout("mixed"))
    w = _weight().to(device).requires_grad_()
    for mode, padding in (("sum", None), ("mean", 2)):
        run_opcheck(torch.ops.gpuprim.embedding_bag.default, (w, idx, offsets, mode, None, padding, False, False, True))
        out, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(w.detach(), idx, offsets, mode, None, padding,
                                                                     False, False, True)
        for sparse in (False, True):
            run_opcheck(torch.ops.gpuprim.embedding_bag_backward.default,
                        (torch.randn_like(out), w.detach(), idx, offsets, bag_size, max_indices, None, mode, padding,
                         False, sparse, True))


def test_compiles(device):
    idx, offsets = (t.to(device) for t in _layout("mixed"))
    w = _weight(torch.float32, scale=3.0).to(device)
    # Each call renorms its own copy of the table (a second renorm of renormed rows may move their last bit).
    check_compiles(lambda x, i, o: gpuprim.embedding_bag(x.clone(), i, o, "mean", max_norm=1.0,
                                                         scale_grad_by_freq=True), w, idx, offsets)
    # The backward through AOT autograd (the registered backward op with scale_grad_by_freq).
    grads = []
    for compiled in (False, True):
        x = _weight(torch.float32).to(device).requires_grad_()
        fn = lambda x, i, o: gpuprim.embedding_bag(x, i, o, "sum", scale_grad_by_freq=True)  # noqa: E731
        if compiled:
            torch._dynamo.reset()
            fn = torch.compile(fn, fullgraph=True, backend="aot_eager", dynamic=True)
        fn(x, idx, offsets).square().sum().backward()
        grads.append(x.grad)
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=0)


def test_backward_deterministic(device):
    idx, offsets = (t.to(device) for t in _layout("hot"))
    w = _weight(torch.float32).to(device)
    for sparse in (False, True):
        assert_deterministic(lambda: _run(lambda x, p: gpuprim.embedding_bag(
            x, idx, offsets, "mean", sparse=sparse, scale_grad_by_freq=True), w)[1])


# ---------------------------------------------------------------- CUDA
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16, torch.float32, torch.float64))
def test_cuda_matches_cpu(dtype):
    # fp32: the hot layout's bag of 1500 rows is summed in windows on CUDA, in one pass on CPU (n * eps ~ 1e-4).
    tol = {torch.float16: 1e-2, torch.bfloat16: 5e-2, torch.float32: 1e-4, torch.float64: 1e-12}[dtype]
    for layout, mode, sparse in itertools.product(LAYOUTS, ("sum", "mean"), (False, True)):
        idx, offsets = _layout(layout)
        fn = lambda w, p, i=idx, o=offsets: gpuprim.embedding_bag(  # noqa: E731
            w, i.to(w.device), None if o is None else o.to(w.device), mode, padding_idx=2, sparse=sparse,
            max_norm=1.0, scale_grad_by_freq=True)
        cpu = _run(fn, _weight(dtype, scale=3.0))
        cuda = _run(fn, _weight(dtype, scale=3.0).cuda())
        for name, a, b in zip(("out", "grad_weight", "grad_psw", "weight"), cuda, cpu):
            if b is not None:
                torch.testing.assert_close(a.cpu(), b, rtol=tol, atol=tol, msg=lambda m: f"{layout} {name}: {m}")


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    idx, offsets = (t.cuda() for t in _layout("hot"))
    w = _weight(torch.float32, scale=3.0).cuda()
    check_no_sync_and_graph_capture(lambda: gpuprim.embedding_bag(w, idx, offsets, "sum", max_norm=1.0))
    out, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(w, idx, offsets, "mean", None, None, False, False,
                                                                 True)
    grad = torch.randn_like(out)
    check_no_sync_and_graph_capture(lambda: torch.ops.gpuprim.embedding_bag_backward(
        grad, w, idx, offsets, bag_size, max_indices, None, "mean", None, False, False, True)[0])
