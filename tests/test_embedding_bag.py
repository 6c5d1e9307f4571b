"""gpuprim.embedding_bag and gpuprim.nn.EmbeddingBag against torch.nn.functional.embedding_bag (the reference),
forward and gradients (weight, per_sample_weights) for every mode and option, on CPU and (marked gpu) CUDA."""
import itertools

import pytest
import torch
import torch.nn.functional as F

import gpuprim
from op_checks import (
    assert_bitwise_equal,
    assert_deterministic,
    check_compiles,
    check_no_grad_fast_path,
    check_no_sync_and_graph_capture,
    run_opcheck,
)
from samples import INDEX_DTYPES

MODES = ("sum", "mean", "max")
NUM_EMBEDDINGS, DIM = 20, 7


# ---------------------------------------------------------------- cases
def _case(name, seed=0):
    """(indices, offsets or None) of a named layout; indices 1-D with offsets, or 2-D without."""
    g = torch.Generator().manual_seed(seed)
    if name == "mixed":  # empty bags (first, middle, last), duplicates within and across bags
        idx = torch.randint(0, NUM_EMBEDDINGS, (30,), generator=g)
        idx[3] = idx[4] = idx[5]
        idx[20] = idx[3]
        return idx, torch.tensor([0, 0, 4, 9, 9, 9, 17, 25, 30])
    if name == "one_bag":  # one bag holding every index, hot rows
        idx = torch.cat([torch.arange(NUM_EMBEDDINGS), torch.full((25,), 3), torch.full((10,), 2)])
        return idx[torch.randperm(idx.numel(), generator=g)], torch.tensor([0])
    if name == "all_equal":
        return torch.full((40,), 5), torch.arange(0, 40, 4)
    if name == "two_d":
        return torch.randint(0, NUM_EMBEDDINGS, (6, 4), generator=g), None
    if name == "empty_input":
        return torch.zeros(0, dtype=torch.long), torch.tensor([0, 0, 0])
    raise ValueError(name)


CASES = ("mixed", "one_bag", "all_equal", "two_d", "empty_input")


def _options():
    """(mode, padding_idx, include_last_offset, use_psw) combinations that torch supports."""
    for mode, padding, last, psw in itertools.product(MODES, (None, 2, -1), (False, True), (False, True)):
        if psw and mode != "sum":
            continue
        yield mode, padding, last, psw


def _inputs(case, last, index_dtype, device, dtype=torch.float64, psw=False, seed=0):
    idx, offsets = _case(case, seed)
    if offsets is not None and last:
        offsets = torch.cat([offsets, torch.tensor([idx.numel()])])
    g = torch.Generator().manual_seed(seed + 1)
    weight = torch.randn(NUM_EMBEDDINGS, DIM, generator=g, dtype=torch.float64).to(dtype)
    weights = torch.randn(idx.shape, generator=g, dtype=torch.float64).to(dtype) if psw else None
    to = lambda t: None if t is None else t.to(device)  # noqa: E731
    return (to(weight), to(idx.to(index_dtype)), to(None if offsets is None else offsets.to(index_dtype)),
            to(weights))


def _grads(fn, weight, psw, grad_out_seed=7, round_grad_to=None, report=None):
    """report: the bad-input report (a regex) the CUDA forward leaves, consumed before the backward runs."""
    w = weight.detach().clone().requires_grad_()
    p = None if psw is None else psw.detach().clone().requires_grad_()
    out = fn(w, p)
    if report is not None:
        with pytest.raises(gpuprim.InputError, match=report):
            gpuprim.check_errors()
    g = torch.Generator().manual_seed(grad_out_seed)
    # A non-contiguous grad_output (a transposed view).
    grad_out = torch.randn(out.shape[1], out.shape[0], generator=g, dtype=torch.float64)
    grad_out = grad_out.to(round_grad_to or out.dtype).to(out.dtype).t()
    grad_out = grad_out.to(out.device)
    out.backward(grad_out)
    gw = w.grad.to_dense() if w.grad.is_sparse else w.grad
    return out.detach(), gw, None if p is None else p.grad


# ---------------------------------------------------------------- against torch (float64: tight)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_matches_torch_every_option(device, case, index_dtype):
    for mode, padding, last, use_psw in _options():
        weight, idx, offsets, psw = _inputs(case, last, index_dtype, device, psw=use_psw)
        for sparse in (False, True) if mode != "max" else (False,):
            ours = _grads(lambda w, p: gpuprim.embedding_bag(w, idx, offsets, mode, p, padding, last, sparse),
                          weight, psw)
            ref_idx, ref_off = idx.cpu().long(), None if offsets is None else offsets.cpu().long()
            ref = _grads(lambda w, p: F.embedding_bag(ref_idx, w, ref_off, mode=mode, per_sample_weights=p,
                                                      padding_idx=padding, include_last_offset=last,
                                                      sparse=sparse), weight.cpu(), None if psw is None else psw.cpu())
            what = f"{case} mode={mode} padding={padding} last={last} psw={use_psw} sparse={sparse}"
            for name, a, b in zip(("out", "grad_weight", "grad_psw"), ours, ref):
                if b is None:
                    assert a is None, what
                    continue
                torch.testing.assert_close(a.cpu(), b, rtol=1e-12, atol=1e-12, msg=lambda m: f"{what} {name}: {m}")


def test_random_layouts_match_torch(device):
    """Random bag layouts (sorted offsets, empty bags, both include_last_offset ways) in every mode, float64."""
    g = torch.Generator().manual_seed(11)
    for trial in range(12):
        n = int(torch.randint(0, 60, (1,), generator=g))
        bags = int(torch.randint(1, 9, (1,), generator=g))
        idx = torch.randint(0, NUM_EMBEDDINGS, (n,), generator=g)
        offsets = torch.sort(torch.randint(0, n + 1, (bags,), generator=g)).values
        offsets[0] = 0
        last = trial % 2 == 1
        if last:
            offsets = torch.cat([offsets, torch.tensor([n])])
        weight = torch.randn(NUM_EMBEDDINGS, DIM, generator=g, dtype=torch.float64)
        mode = MODES[trial % 3]
        psw = torch.randn(n, generator=g, dtype=torch.float64) if mode == "sum" and trial % 4 == 0 else None
        padding = None if trial % 5 == 0 else int(idx[0]) if n else None
        dev = [t.to(device) if t is not None else None for t in (weight, idx, offsets, psw)]
        ours = _grads(lambda w, p: gpuprim.embedding_bag(w, dev[1], dev[2], mode, p, padding, last), dev[0], dev[3])
        ref = _grads(lambda w, p: F.embedding_bag(idx, w, offsets, mode=mode, per_sample_weights=p,
                                                  padding_idx=padding, include_last_offset=last), weight, psw)
        for a, b in zip(ours, ref):
            if b is not None:
                torch.testing.assert_close(a.cpu(), b, rtol=1e-12, atol=1e-12)


def test_sparse_gradient_is_coalesced_row_sparse(device):
    weight, idx, offsets, _ = _inputs("mixed", False, torch.int64, device)
    w = weight.clone().requires_grad_()
    gpuprim.embedding_bag(w, idx, offsets, "sum", padding_idx=2, sparse=True).sum().backward()
    assert w.grad.is_sparse
    rows = w.grad._indices()[0].cpu()
    expected = torch.unique(idx.cpu()[idx.cpu() != 2])
    assert torch.equal(rows, expected)  # the distinct used rows, sorted; padding gets no row


@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16, torch.float32))
@pytest.mark.parametrize("mode", MODES)
def test_low_precision_within_bound(device, dtype, mode):
    """fp16/bf16/fp32 weights accumulate in fp32: a sum of m terms is within (m + 1) * eps32 * sum|x| of the
    exact one, then rounds once to dtype (eps_dtype * |exact|). max is exact (a stored value). The float64
    reference sees the same dtype-rounded inputs and grad_output."""
    weight, idx, offsets, psw = _inputs("one_bag", False, torch.int64, device, dtype=dtype, psw=mode == "sum")
    weight64 = weight.double()
    ours = _grads(lambda w, p: gpuprim.embedding_bag(w, idx, offsets, mode, p), weight, psw)
    ref = _grads(lambda w, p: F.embedding_bag(idx.cpu(), w, offsets.cpu(), mode=mode, per_sample_weights=p),
                 weight64.cpu(), None if psw is None else psw.double().cpu(), round_grad_to=dtype)
    m = idx.numel() + 1
    eps32, eps = torch.finfo(torch.float32).eps, torch.finfo(dtype).eps
    for name, a, b in zip(("out", "grad_weight", "grad_psw"), ours, ref):
        if b is None:
            continue
        # Scale of the terms: every entry of the operands is |x| < ~5 here, products < 25; m terms at most.
        bound = (m + 1) * eps32 * 25 * m + eps * b.abs() + 1e-30
        err = (a.cpu().double() - b).abs()
        assert bool((err <= bound).all()), f"{name}: max err {err.max()}"


def test_int32_and_int64_agree_bitwise(device):
    for mode in MODES:
        a = _inputs("mixed", False, torch.int32, device, dtype=torch.float32)
        b = _inputs("mixed", False, torch.int64, device, dtype=torch.float32)
        ra = _grads(lambda w, p: gpuprim.embedding_bag(w, a[1], a[2], mode), a[0], None)
        rb = _grads(lambda w, p: gpuprim.embedding_bag(w, b[1], b[2], mode), b[0], None)
        for x, y in zip(ra[:2], rb[:2]):
            assert_bitwise_equal(x, y, mode)


def test_max_ties_and_empty_bags(device):
    weight = torch.tensor([[1.0, 5.0], [1.0, 2.0], [3.0, 5.0]], dtype=torch.float64, device=device)
    idx = torch.tensor([0, 1, 2, 1], device=device)
    offsets = torch.tensor([0, 2, 2], device=device)  # bag 1 is empty
    out, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, "max")
    assert torch.equal(out.cpu(), torch.tensor([[1.0, 5.0], [0.0, 0.0], [3.0, 5.0]], dtype=torch.float64))
    assert torch.equal(max_indices.cpu(), torch.tensor([[0, 0], [-1, -1], [2, 2]]))  # first maximum wins
    assert torch.equal(bag_size.cpu(), torch.tensor([2, 0, 2]))


# ---------------------------------------------------------------- the backward op alone
def test_backward_op_alone(device):
    weight, idx, offsets, psw = _inputs("mixed", False, torch.int64, device, psw=True)
    out, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, "sum", psw, 2)
    grad = torch.randn_like(out)
    gw, rows, num_rows, gpsw = torch.ops.gpuprim.embedding_bag_backward(grad, weight, idx, offsets, bag_size,
                                                                        max_indices, psw, "sum", 2, False, False)
    w, p = weight.clone().requires_grad_(), psw.clone().requires_grad_()
    F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p, padding_idx=2).backward(grad)
    torch.testing.assert_close(gw, w.grad)
    torch.testing.assert_close(gpsw, p.grad)
    assert rows.numel() == 0 and int(num_rows) == torch.unique(idx[idx != 2]).numel()
    gs, rows, num_rows, _ = torch.ops.gpuprim.embedding_bag_backward(grad, weight, idx, offsets, bag_size,
                                                                     max_indices, psw, "sum", 2, False, True)
    n = int(num_rows)
    assert rows.shape == (idx.numel(),) and bool((rows[n:] == 0).all()) and bool((gs[n:] == 0).all())
    torch.testing.assert_close(gw[rows[:n]], gs[:n])


def test_gradients_are_bitwise_reproducible(device):
    for mode in MODES:
        weight, idx, offsets, psw = _inputs("one_bag", False, torch.int64, device, dtype=torch.float32,
                                            psw=mode == "sum")

        def run():
            _, gw, gp = _grads(lambda w, p: gpuprim.embedding_bag(w, idx, offsets, mode, p), weight, psw)
            return [gw] + ([gp] if gp is not None else [])

        assert_deterministic(run)


# ---------------------------------------------------------------- bad input
def test_bad_arguments_raise(device):
    weight, idx, offsets, _ = _inputs("mixed", False, torch.int64, device)
    psw = torch.ones(idx.shape, dtype=weight.dtype, device=device)
    with pytest.raises(ValueError, match="mode must be"):
        gpuprim.embedding_bag(weight, idx, offsets, "min")
    with pytest.raises(ValueError, match="per_sample_weights must be None unless mode='sum'"):
        gpuprim.embedding_bag(weight, idx, offsets, "mean", psw)
    with pytest.raises(ValueError, match="per_sample_weights must be of indices' shape"):
        gpuprim.embedding_bag(weight, idx, offsets, "sum", psw[:-1])
    with pytest.raises(TypeError, match="per_sample_weights must be of weight's dtype"):
        gpuprim.embedding_bag(weight, idx, offsets, "sum", psw.float())
    with pytest.raises(ValueError, match="offsets must be None when indices is 2-D"):
        gpuprim.embedding_bag(weight, idx.view(5, 6), offsets)
    with pytest.raises(ValueError, match="offsets must be given"):
        gpuprim.embedding_bag(weight, idx)
    with pytest.raises(ValueError, match="include_last_offset"):
        gpuprim.embedding_bag(weight, idx, offsets[:0], include_last_offset=True)
    with pytest.raises(ValueError, match="sparse must be False with mode='max'"):
        gpuprim.embedding_bag(weight, idx, offsets, "max", sparse=True)
    with pytest.raises(ValueError, match="padding_idx must be in"):
        gpuprim.embedding_bag(weight, idx, offsets, padding_idx=NUM_EMBEDDINGS)
    with pytest.raises(TypeError, match="indices must be an int32 or int64"):
        gpuprim.embedding_bag(weight, idx.float(), offsets)
    with pytest.raises(TypeError, match="weight must be a float16"):
        gpuprim.embedding_bag(weight.long(), idx, offsets)


def test_validate_mode_catches_bad_data(device):
    weight, idx, offsets, _ = _inputs("mixed", False, torch.int64, device)
    bad_idx = idx.clone()
    bad_idx[4] = NUM_EMBEDDINGS
    neg_idx = idx.clone()
    neg_idx[0] = -1
    with gpuprim.validate():
        with pytest.raises(IndexError, match=r"indices must be in \[0, 20\), got 20"):
            gpuprim.embedding_bag(weight, bad_idx, offsets)
        with pytest.raises(IndexError, match="got -1"):
            gpuprim.embedding_bag(weight, neg_idx, offsets)
        with pytest.raises(ValueError, match=r"offsets\[0\] must be 0"):
            gpuprim.embedding_bag(weight, idx, offsets + 1)
        with pytest.raises(ValueError, match="non-decreasing"):
            gpuprim.embedding_bag(weight, idx, torch.tensor([0, 5, 3], device=device))
        with pytest.raises(ValueError, match=r"offsets\[-1\] must be <= len\(indices\)"):
            gpuprim.embedding_bag(weight, idx, torch.tensor([0, 31], device=device))
        with pytest.raises(ValueError, match=r"offsets\[-1\] must be len\(indices\) = 30 with include_last_offset"):
            gpuprim.embedding_bag(weight, idx, torch.tensor([0, 5, 29], device=device), include_last_offset=True)
        gpuprim.embedding_bag(weight, idx, offsets)  # valid input passes


def test_bad_data_raises_on_cpu():
    """The CPU kernels check every index and offset at the call, like torch."""
    weight, idx, offsets, _ = _inputs("mixed", False, torch.int64, "cpu")
    for value in (NUM_EMBEDDINGS, -1):
        bad = idx.clone()
        bad[7] = value
        with pytest.raises(IndexError, match=rf"gpuprim.embedding_bag: indices\[7\] = {value} is out of range for "
                           rf"dimension 0 of size {NUM_EMBEDDINGS}"):
            gpuprim.embedding_bag(weight, bad, offsets)
    for wild, message in (([3, 4, 10], r"offsets\[0\] = 3 must be 0"),
                          ([0, 5, 3], r"offsets\[2\] = 3 is less than offsets\[1\] = 5 \(offsets must be "
                                      r"non-decreasing"),
                          ([0, 5, idx.numel() + 1], rf"offsets\[2\] = {idx.numel() + 1} is past the end: greater than "
                                                    rf"{idx.numel()}")):
        with pytest.raises(ValueError, match=message):
            gpuprim.embedding_bag(weight, idx, torch.tensor(wild))
    with pytest.raises(TypeError, match="takes weight first"):
        gpuprim.embedding_bag(idx, weight.float(), offsets)


@pytest.mark.gpu
def test_bad_data_on_cuda_is_memory_safe():
    """On CUDA, out-of-range indices are skipped like padding_idx and bad offsets clamped: no out-of-bounds access."""
    device = "cuda"
    weight, idx, offsets, _ = _inputs("mixed", False, torch.int64, device)
    bad = idx.clone()
    bad[[1, 7, 12]] = torch.tensor([NUM_EMBEDDINGS, -5, 10**12], device=device)
    for mode in MODES:
        out, gw, _ = _grads(lambda w, p: gpuprim.embedding_bag(w, bad, offsets, mode), weight, None,
                            report=rf"indices\[1\] = {NUM_EMBEDDINGS} is out of range")
        # Reference: the same bags with the bad entries replaced by an appended all-padding row.
        padded = torch.cat([weight.cpu(), torch.zeros(1, DIM, dtype=weight.dtype)])
        ref_idx = torch.where((bad.cpu() < 0) | (bad.cpu() >= NUM_EMBEDDINGS), NUM_EMBEDDINGS, bad.cpu())
        ref = _grads(lambda w, p: F.embedding_bag(ref_idx, w, offsets.cpu(), mode=mode, padding_idx=NUM_EMBEDDINGS),
                     padded, None)
        torch.testing.assert_close(out.cpu(), ref[0])
        torch.testing.assert_close(gw.cpu(), ref[1][:NUM_EMBEDDINGS])
    wild = torch.tensor([3, -4, 100, 2, 40], device=device)  # clamped into [0, 30]; decreasing pairs are empty
    out = gpuprim.embedding_bag(weight, idx, wild, "sum")
    assert out.shape == (5, DIM) and bool(torch.isfinite(out).all())
    with pytest.raises(gpuprim.InputError, match=r"gpuprim.embedding_bag: offsets\[0\] = 3 must be 0"):
        gpuprim.check_errors()


# ---------------------------------------------------------------- torch.library / autograd / compile
def _opcheck_samples(device):
    for case, (mode, padding, last, use_psw) in itertools.product(("mixed", "two_d"), _options()):
        if padding == -1:
            continue
        weight, idx, offsets, psw = _inputs(case, last, torch.int64, device, psw=use_psw)
        yield weight.requires_grad_(), idx, offsets, mode, psw, padding, last


def test_opcheck(device):
    for weight, idx, offsets, mode, psw, padding, last in _opcheck_samples(device):
        run_opcheck(torch.ops.gpuprim.embedding_bag.default, (weight, idx, offsets, mode, psw, padding, last, False))
        if psw is not None:
            run_opcheck(torch.ops.gpuprim.embedding_bag.default,
                        (weight.detach(), idx, offsets, mode, psw.requires_grad_(), padding, last, False))
    weight, idx, offsets, psw = _inputs("mixed", False, torch.int64, device, psw=True)
    out, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, "sum", psw, 2)
    for sparse in (False, True):
        run_opcheck(torch.ops.gpuprim.embedding_bag_backward.default,
                    (torch.randn_like(out), weight, idx, offsets, bag_size, max_indices, psw, "sum", 2, False, sparse))


def test_gradcheck(device):
    for mode in MODES:
        weight, idx, offsets, psw = _inputs("mixed", False, torch.int64, device, psw=mode == "sum")
        weight.requires_grad_()
        if mode == "max":  # keep the maxima well separated so finite differences do not cross them
            perm = torch.randperm(weight.numel(), generator=torch.Generator().manual_seed(0))
            weight = (perm.double() * 0.1).view_as(weight).to(device).requires_grad_()
        args = [weight] + ([psw.requires_grad_()] if psw is not None else [])
        fn = lambda w, *p: gpuprim.embedding_bag(w, idx, offsets, mode, p[0] if p else None, 2)  # noqa: E731
        assert torch.autograd.gradcheck(fn, tuple(args))


def test_compiles(device):
    weight, idx, offsets, psw = _inputs("mixed", False, torch.int64, device, psw=True)
    check_compiles(lambda w, i, o, p: gpuprim.embedding_bag(w, i, o, "sum", p, 2), weight, idx, offsets, psw)
    check_compiles(lambda w, i, o: gpuprim.embedding_bag(w, i, o, "max"), weight, idx, offsets, dynamic=True)


@pytest.mark.parametrize("backend", ("aot_eager", pytest.param("inductor", marks=pytest.mark.gpu)))
def test_compiled_training_step_with_module(device, backend):
    """torch.compile(fullgraph=True) of a small model's loss using gpuprim.nn.EmbeddingBag (forward and, through
    AOT autograd, the registered backward op), then an SGD step: same loss, gradients and updated weights as
    eager."""
    idx, offsets = (t.to(device) for t in _case("mixed"))
    target = torch.randn(offsets.numel(), 1, generator=torch.Generator().manual_seed(5)).to(device)

    def make():
        torch.manual_seed(0)
        emb = gpuprim.nn.EmbeddingBag(NUM_EMBEDDINGS, 8, mode="mean", padding_idx=0).to(device)
        return torch.nn.Sequential(emb, torch.nn.Linear(8, 1)).to(device)

    def loss_fn(model, i, o):
        emb, lin = model[0], model[1]
        return ((lin(emb(i, o)) - target) ** 2).mean()

    results = []
    for compiled in (False, True):
        model = make()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        torch._dynamo.reset()
        fn = torch.compile(loss_fn, fullgraph=True, backend=backend) if compiled else loss_fn
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = fn(model, idx, offsets)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        results.append((losses, model[0].weight.detach().clone()))
    torch.testing.assert_close(results[1][0], results[0][0])
    torch.testing.assert_close(results[1][1], results[0][1])


def test_module_is_a_drop_in(device):
    torch.manual_seed(0)
    ref = torch.nn.EmbeddingBag(NUM_EMBEDDINGS, DIM, mode="max", include_last_offset=True, padding_idx=1).to(device)
    ours = gpuprim.nn.EmbeddingBag(NUM_EMBEDDINGS, DIM, mode="max", include_last_offset=True, padding_idx=1)
    ours.load_state_dict(ref.state_dict())
    ours = ours.to(device)
    idx, offsets = _case("mixed")
    offsets = torch.cat([offsets, torch.tensor([idx.numel()])])
    idx, offsets = idx.to(device), offsets.to(device)
    torch.testing.assert_close(ours(idx, offsets), ref(idx, offsets))
    two_d = torch.randint(0, NUM_EMBEDDINGS, (3, 5), device=device)
    torch.testing.assert_close(ours(two_d), ref(two_d))
    w = torch.randn(NUM_EMBEDDINGS, DIM, device=device)
    sparse_mod = gpuprim.nn.EmbeddingBag(NUM_EMBEDDINGS, DIM, mode="sum", sparse=True, _weight=w)
    assert sparse_mod.weight.data_ptr() == w.data_ptr()
    sparse_mod(idx, offsets[:-1]).sum().backward()
    assert sparse_mod.weight.grad.is_sparse


# ---------------------------------------------------------------- CUDA
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16, torch.float32, torch.float64))
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_cuda_matches_cpu(dtype, index_dtype):
    tol = {torch.float16: 1e-2, torch.bfloat16: 5e-2, torch.float32: 1e-5, torch.float64: 1e-12}[dtype]
    for case in CASES:
        for mode, padding, last, use_psw in _options():
            for sparse in (False, True) if mode != "max" else (False,):
                args = _inputs(case, last, index_dtype, "cpu", dtype=dtype, psw=use_psw)
                fn = lambda w, i, o, p: (lambda w_, p_: gpuprim.embedding_bag(  # noqa: E731
                    w_, i, o, mode, p_, padding, last, sparse))
                cpu = _grads(fn(*args), args[0], args[3])
                cu = [None if t is None else t.cuda() for t in args]
                cuda = _grads(fn(*cu), cu[0], cu[3])
                for a, b in zip(cuda, cpu):
                    if b is not None:
                        torch.testing.assert_close(a.cpu(), b, rtol=tol, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16))
def test_cuda_hot_rows_deterministic_and_correct(mode, dtype):
    """Zipf-like and all-equal indices (one row in every bag: split into chunks across blocks)."""
    g = torch.Generator().manual_seed(3)
    n_rows, dim, bags, per_bag = 5000, 128, 4096, 20
    zipf = (torch.rand(bags * per_bag, generator=g) ** 4 * n_rows).long()
    for idx in (zipf, torch.full((bags * per_bag,), 7)):
        weight = torch.randn(n_rows, dim, generator=g).to(dtype)
        offsets = torch.arange(0, bags * per_bag, per_bag)
        psw = torch.randn(idx.shape, generator=g).to(dtype) if mode == "sum" else None
        cu = [t.cuda() if t is not None else None for t in (weight, idx, offsets, psw)]

        def run():
            _, gw, gp = _grads(lambda w, p: gpuprim.embedding_bag(w, cu[1], cu[2], mode, p), cu[0], cu[3])
            return [gw] + ([gp] if gp is not None else [])

        assert_deterministic(run)
        ref = _grads(lambda w, p: F.embedding_bag(idx, w, offsets, mode=mode, per_sample_weights=p),
                     weight.double(), None if psw is None else psw.double())
        ours = _grads(lambda w, p: gpuprim.embedding_bag(w, cu[1], cu[2], mode, p), cu[0], cu[3])
        for a, b in zip(ours, ref):
            if b is not None:
                scale = b.abs().max().item() + 1
                tol = 2e-2 if dtype == torch.bfloat16 else 1e-4
                torch.testing.assert_close(a.cpu().double(), b, rtol=tol, atol=tol * scale)


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    weight, idx, offsets, psw = _inputs("mixed", False, torch.int64, "cuda", dtype=torch.float32, psw=True)
    out, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, "sum", psw, 2)
    grad = torch.randn_like(out)
    check_no_sync_and_graph_capture(lambda: torch.ops.gpuprim.embedding_bag(weight, idx, offsets, "sum", psw, 2))
    check_no_sync_and_graph_capture(lambda: torch.ops.gpuprim.embedding_bag_backward(
        grad, weight, idx, offsets, bag_size, max_indices, psw, "sum", 2, False, False))
    out, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, "max")
    check_no_sync_and_graph_capture(lambda: torch.ops.gpuprim.embedding_bag_backward(
        grad, weight, idx, offsets, bag_size, max_indices, None, "max", None, False, False))


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ("sum", "mean"))
@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16))
def test_cuda_dense_gradient_writes_every_row(mode, dtype):
    """The dense sum/mean weight gradient gets no zero fill first: each row, untouched and padding rows included,
    is written exactly once by the kernels. NaN-filled blocks handed back to the caching allocator would show
    through any row that is missed."""
    g = torch.Generator().manual_seed(5)
    n_rows, dim, bags, per_bag = 20000, 64, 512, 20
    idx = torch.randint(0, n_rows // 4, (bags * per_bag,), generator=g)  # 3/4 of the table gets nothing
    idx[::3] = 11  # a hot row (several chunks) next to single-chunk and empty rows
    offsets = torch.arange(0, bags * per_bag, per_bag)
    weight = torch.randn(n_rows, dim, generator=g).to(dtype)
    cu = [t.cuda() for t in (weight, idx, offsets)]
    for padding in (None, 3):
        poison = [torch.full((n_rows, dim), float("nan"), device="cuda", dtype=dtype) for _ in range(4)]
        del poison
        _, gw, _ = _grads(lambda w, p: gpuprim.embedding_bag(w, cu[1], cu[2], mode, padding_idx=padding), cu[0], None)
        _, ref, _ = _grads(lambda w, p: F.embedding_bag(idx, w, offsets, mode=mode, padding_idx=padding),
                           weight.double(), None)
        assert not gw.isnan().any()
        assert (gw.cpu()[ref == 0] == 0).all()
        tol = 2e-2 if dtype == torch.bfloat16 else 1e-4
        torch.testing.assert_close(gw.cpu().double(), ref, rtol=tol, atol=tol * (ref.abs().max().item() + 1))
    # Positions before the first offset lie in no bag (bad offsets: reported, and memory-safe): rows named only
    # there get no gradient and must still be written (zeros); row 11 is named there and in bags too.
    unbagged = idx.clone()
    unbagged[:5] = torch.tensor([11, n_rows - 10, n_rows - 9, n_rows - 8, n_rows - 7])
    shifted = offsets.clone()
    shifted[0] = 5
    poison = [torch.full((n_rows, dim), float("nan"), device="cuda", dtype=dtype) for _ in range(4)]
    del poison
    _, gw, _ = _grads(lambda w, p: gpuprim.embedding_bag(w, unbagged.cuda(), shifted.cuda(), mode), cu[0], None,
                      report=r"offsets\[0\] = 5 must be 0")
    # The same bags without the positions that lie in none (the CPU raises on the bad offsets themselves).
    _, expected, _ = _grads(lambda w, p: gpuprim.embedding_bag(w, unbagged[5:], shifted - 5, mode), weight, None)
    assert not gw.isnan().any()
    assert (gw.cpu()[n_rows - 10:n_rows - 6] == 0).all()
    torch.testing.assert_close(gw.cpu(), expected, rtol=tol, atol=tol * (expected.abs().max().item() + 1))


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ("sum", "mean"))
@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16))
def test_cuda_sparse_gradient_slots_past_num_rows_are_zero(mode, dtype):
    """The sparse backward op's nnz slots get no zero fill first: the distinct rows' slots are written by the
    reduction, the rest zeroed after it from the device count. NaN- and 0xff-filled blocks handed back to the
    caching allocator would show through any slot that is missed."""
    g = torch.Generator().manual_seed(6)
    n_rows, dim, bags, per_bag = 5000, 64, 256, 20
    for spread in (n_rows, 7, 1):  # mostly distinct ids, a few hot ones, every id equal (the tail is all but one)
        idx = torch.randint(0, spread, (bags * per_bag,), generator=g)
        idx[::5] = 3  # padding_idx: its pairs are skipped, so the tail includes their slots
        offsets = torch.arange(0, bags * per_bag, per_bag)
        weight = torch.randn(n_rows, dim, generator=g).to(dtype)
        grad = torch.randn(bags, dim, generator=g).to(dtype)
        _, bag_size, max_indices = torch.ops.gpuprim.embedding_bag(weight, idx, offsets, mode, None, 3)
        cpu = torch.ops.gpuprim.embedding_bag_backward(grad, weight, idx, offsets, bag_size, max_indices, None, mode, 3,
                                                       False, True)
        poison = [torch.full((idx.numel(), dim), float("nan"), device="cuda", dtype=dtype),
                  torch.full((idx.numel(),), -1, device="cuda", dtype=torch.long)]
        del poison
        cu = torch.ops.gpuprim.embedding_bag_backward(grad.cuda(), weight.cuda(), idx.cuda(), offsets.cuda(),
                                                      bag_size.cuda(), max_indices.cuda(), None, mode, 3, False, True)
        n = int(cu[2])
        assert n == int(cpu[2]) == torch.unique(idx[idx != 3]).numel()
        assert bool((cu[1][n:] == 0).all()) and bool((cu[0][n:] == 0).all()), f"spread {spread}"
        assert torch.equal(cu[1].cpu(), cpu[1])
        tol = 2e-2 if dtype == torch.bfloat16 else 1e-4  # hot rows fold their chunks in another order than the CPU
        expected = cpu[0].float()
        scale = expected.abs().max().item() + 1
        torch.testing.assert_close(cu[0].cpu().float(), expected, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("mode", ["sum", "max"])
def test_no_grad_fast_path(device, mode):
    weight = torch.randn(50, 12, dtype=torch.float64, device=device)
    indices = torch.randint(0, 50, (40,), device=device)
    offsets = torch.tensor([0, 7, 7, 20, 33], device=device)
    check_no_grad_fast_path(lambda w: gpuprim.embedding_bag(w, indices, offsets, mode), weight)
