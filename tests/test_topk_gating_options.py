"""gpuprim.topk_gating / moe_route options (bias, group-limited selection, scaling, gate_dtype) against a
pure-PyTorch router written as the HF DeepSeek-V3 / Qwen / Mixtral blocks write theirs, with gpuprim's tie
contract (lower expert, and lower group, index wins) made explicit by stable sorts. Equal logits give equal
scores in both, so the designed ties are ties in both; random logits have no near ties. CUDA gives the CPU's
bits (checked on the GPU).
"""
import pytest
import torch

import gpuprim
from op_checks import (
    assert_bitwise_equal,
    assert_deterministic,
    check_compiled_backward,
    check_compiles,
    check_no_sync_and_graph_capture,
    run_opcheck,
)

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def reference_router(logits, k, score="softmax", renormalize=True, bias=None, num_groups=None, topk_groups=None,
                     scaling=1.0, gate_dtype=None, ids=None, with_choice=False):
    """(gates, ids) in PyTorch, differentiable in logits: scores, biased choice scores, group top-2 sums,
    group top-k, mask, top-k, gather, renormalize, scale, cast. ids: gates of these experts instead;
    with_choice: also the masked ranking scores."""
    x = logits.float()
    tokens, experts = x.shape
    scores = torch.softmax(x, -1) if score == "softmax" else torch.sigmoid(x)
    if bias is None and num_groups is None:
        choice = x.detach()  # ranked by logit
    else:
        choice = scores.detach() + (bias.float().to(x.device) if bias is not None else 0.0)
    if num_groups is not None:
        size = experts // num_groups
        grouped = choice.view(tokens, num_groups, size)
        group_scores = grouped.sort(-1, descending=True).values[..., :min(2, size)].sum(-1)
        kept = group_scores.sort(dim=-1, descending=True, stable=True).indices[:, :topk_groups]
        mask = torch.zeros(tokens, num_groups, dtype=torch.bool, device=x.device).scatter_(1, kept, True)
        choice = choice.masked_fill(~mask.repeat_interleave(size, 1), float("-inf"))
    if ids is None:
        ids = choice.sort(dim=-1, descending=True, stable=True).indices[:, :k]
    gates = scores.gather(1, ids)
    if renormalize:
        gates = gates / gates.sum(-1, keepdim=True)
    gates = (gates * scaling).to(gate_dtype or torch.float32)
    return (gates, ids, choice) if with_choice else (gates, ids)


def check_router(logits, k, tol=1e-5, **options):
    gates, ids = _call(logits, k, **options)
    ref_gates, ref_ids, choice = reference_router(logits.detach().cpu(), k, with_choice=True, **_cpu(options))
    assert gates.dtype == (options.get("gate_dtype") or torch.float32) and ids.dtype == torch.int64
    # Tokens whose choice differs: only where torch's scores and gpuprim's (its own exp) round differently
    # between two nearly equal ranking scores; the chosen sets must then score the same to ~1 ulp.
    same = (ids.cpu() == ref_ids).all(-1)
    if not bool(same.all()):
        ours = choice.gather(1, ids.cpu()[~same]).sort(-1).values
        theirs = choice.gather(1, ref_ids[~same]).sort(-1).values
        torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-7, msg="expert_ids differ from the reference")
        assert int((~same).sum()) <= max(1, ids.size(0) // 100)
    rtol = tol if gates.dtype == torch.float32 else (1e-2 if gates.dtype == torch.bfloat16 else 1e-3)
    torch.testing.assert_close(gates.detach().cpu()[same], ref_gates[same], rtol=rtol, atol=1e-6, equal_nan=True)
    return gates, ids


def _call(logits, k, **options):
    score = options.get("score", "softmax")
    renormalize = options.get("renormalize", True)
    rest = {n: v for n, v in options.items() if n not in ("score", "renormalize")}
    return gpuprim.topk_gating(logits, k, score, renormalize, **rest)


def _cpu(options):
    return {n: (v.cpu() if isinstance(v, torch.Tensor) else v) for n, v in options.items()}


def _logits(tokens, experts, dtype, seed, ties=False):
    g = torch.Generator().manual_seed(seed)
    if ties:
        return torch.randint(-3, 3, (tokens, experts), generator=g).to(dtype)
    return (torch.randn(tokens, experts, generator=g) * 2).to(dtype)


def _bias(experts, seed, scale=0.1):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(experts, generator=g) * scale).float()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
@pytest.mark.parametrize("renormalize", [True, False])
def test_options_match_reference(device, dtype, score, renormalize):
    for tokens, experts, k, groups in [(37, 8, 2, (4, 2)), (64, 64, 6, (8, 3)), (50, 256, 8, (8, 4)),
                                       (20, 160, 6, (8, 3)), (9, 1024, 8, (32, 4)), (16, 96, 32, (4, 4)),
                                       (0, 16, 2, (4, 2))]:
        logits = _logits(tokens, experts, dtype, experts).to(device)
        bias = _bias(experts, experts).to(device)
        common = dict(score=score, renormalize=renormalize)
        check_router(logits, k, bias=bias, **common)
        check_router(logits, k, num_groups=groups[0], topk_groups=groups[1], **common)
        check_router(logits, k, bias=bias, num_groups=groups[0], topk_groups=groups[1], scaling=2.5, **common)
        check_router(logits, k, scaling=0.5, **common)
        check_router(logits, k, gate_dtype=torch.bfloat16, **common)


def test_bias_changes_selection(device):
    logits = torch.tensor([[3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0, -4.0]] * 3, device=device)
    bias = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0], device=device)  # expert 7 must win
    for score in ("softmax", "sigmoid"):
        gates, ids = check_router(logits, 2, score=score, bias=bias)
        assert ids[:, 0].tolist() == [7, 7, 7] and ids[:, 1].tolist() == [0, 0, 0]
        row = logits[0].cpu()
        plain = torch.sigmoid(row[[7, 0]]) if score == "sigmoid" else torch.softmax(row, 0)[[7, 0]]
        torch.testing.assert_close(gates[0].cpu(), plain / plain.sum())  # the unbiased scores give the gates


def test_group_ties_across_groups(device):
    """Every group holds the same values (permuted): equal group scores, the lower group index is kept; equal
    biased scores inside the kept groups go to the lower expert index."""
    g = torch.Generator().manual_seed(3)
    base = torch.tensor([0.5, -1.0, 2.0, 2.0, 0.25, -3.0, 1.0, 0.0])
    rows = []
    for _ in range(40):
        rows.append(torch.cat([base[torch.randperm(8, generator=g)] for _ in range(8)]))
    logits = torch.stack(rows).to(device)  # [40, 64]: 8 groups of 8, equal scores in every group
    for score in ("sigmoid", "softmax"):
        for topk_groups, k in ((1, 2), (3, 6), (4, 8)):
            gates, ids = check_router(logits, k, score=score, num_groups=8, topk_groups=topk_groups)
            assert int(ids.max()) < 8 * topk_groups  # the lowest groups
    # One group raised by the bias now wins its place.
    bias = torch.zeros(64, device=device)
    bias[56:] = 1.0
    _, ids = check_router(logits, 4, score="sigmoid", bias=bias, num_groups=8, topk_groups=2)
    assert bool((ids >= 56).any(1).all())


def test_sigmoid_without_renormalize(device):
    logits = _logits(30, 32, torch.float32, 1).to(device)
    bias = _bias(32, 2).to(device)
    gates, ids = check_router(logits, 4, score="sigmoid", renormalize=False, bias=bias, scaling=2.0)
    torch.testing.assert_close(gates.cpu(), 2.0 * torch.sigmoid(logits.cpu().gather(1, ids.cpu())))


@pytest.mark.parametrize("gate_dtype", [torch.bfloat16, torch.float16], ids=str)
def test_gate_dtype_is_the_rounded_fp32_gate(device, gate_dtype):
    logits = _logits(100, 64, torch.bfloat16, 4).to(device)
    for options in (dict(), dict(bias=_bias(64, 5).to(device), num_groups=8, topk_groups=4, score="sigmoid")):
        fp32_gates, ids = _call(logits, 8, scaling=2.5, **options)
        gates, same_ids = _call(logits, 8, scaling=2.5, gate_dtype=gate_dtype, **options)
        assert gates.dtype == gate_dtype and torch.equal(ids, same_ids)
        assert_bitwise_equal(gates, fp32_gates.to(gate_dtype), "gates")


def test_scaling_and_plain_path_agree_bitwise(device):
    logits = _logits(200, 64, torch.float32, 6).to(device)
    for score in ("softmax", "sigmoid"):
        for renormalize in (True, False):
            gates, ids = gpuprim.topk_gating(logits, 6, score, renormalize)
            scaled, scaled_ids = gpuprim.topk_gating(logits, 6, score, renormalize, scaling=2.5)
            assert torch.equal(ids, scaled_ids)
            assert_bitwise_equal(scaled, gates * 2.5, "gates")


def test_grad_matches_reference(device):
    for options in (dict(score="sigmoid", bias=_bias(32, 1), num_groups=4, topk_groups=2, scaling=2.5),
                    dict(score="softmax", renormalize=False, bias=_bias(32, 2)),
                    dict(score="softmax", num_groups=8, topk_groups=3, gate_dtype=torch.bfloat16),
                    dict(score="sigmoid", renormalize=True, scaling=0.5, gate_dtype=torch.float16)):
        options = {n: (v.to(device) if isinstance(v, torch.Tensor) else v) for n, v in options.items()}
        logits = _logits(24, 32, torch.float32, 3).to(device).requires_grad_()
        gates, ids = _call(logits, 4, **options)
        grad = torch.randn(gates.shape, device=device).to(gates.dtype)
        (ours,) = torch.autograd.grad(gates, logits, grad)
        ref_gates, _ = reference_router(logits, 4, ids=ids, **options)
        (theirs,) = torch.autograd.grad(ref_gates, logits, grad)
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)


def test_no_gradient_to_bias(device):
    logits = _logits(8, 16, torch.float32, 2).to(device).requires_grad_()
    bias = _bias(16, 3).to(device).requires_grad_()
    gates, _ = gpuprim.topk_gating(logits, 2, "sigmoid", bias=bias)
    gates.sum().backward()
    assert bias.grad is None and logits.grad is not None


def test_bitwise_reproducible(device):
    logits = _logits(4096, 256, torch.bfloat16, 9, ties=True).to(device)
    bias = _bias(256, 1, 0.01).to(device)
    assert_deterministic(lambda: gpuprim.topk_gating(logits, 8, "sigmoid", bias=bias, num_groups=8, topk_groups=4,
                                                     scaling=2.5), runs=3)


def test_opcheck(device):
    bias = _bias(16, 1).to(device)
    op = torch.ops.gpuprim.topk_gating.default
    for dtype in DTYPES:
        logits = _logits(33, 16, dtype, 4).to(device)
        run_opcheck(op, (logits, 4, "sigmoid", True, bias, 4, 2, 2.5, torch.bfloat16))
        run_opcheck(op, (logits, 2, "softmax", False, None, 8, 3, 1.0, None))
    logits = _logits(9, 16, torch.float32, 5).to(device).requires_grad_()
    run_opcheck(op, (logits, 3, "sigmoid", True, bias, 4, 2, 2.5, None))
    run_opcheck(op, (logits, 3, "softmax", True, None, None, None, 0.5, torch.bfloat16))
    run_opcheck(torch.ops.gpuprim.moe_route.default,
                (logits, 3, "sigmoid", True, None, 1, "position", bias, 4, 2, 2.5, torch.bfloat16))


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    bias = _bias(64, 1).to(device)

    def f(x):
        gates, ids = gpuprim.topk_gating(x * 2, 8, "sigmoid", bias=bias, num_groups=8, topk_groups=4, scaling=2.5,
                                         gate_dtype=torch.bfloat16)
        return gates * 3, ids

    check_compiles(f, torch.randn(64, 64, device=device), dynamic=dynamic)
    check_compiles(f, torch.randn(17, 64, device=device), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    bias = _bias(32, 1).to(device)

    def step(x):
        routing = gpuprim.moe_route(x, 4, score="sigmoid", bias=bias, num_groups=4, topk_groups=2, scaling=2.5)
        return (routing.gates * routing.expert_ids.float()).sum()

    check_compiled_backward(step, torch.randn(32, 32, device=device, requires_grad=True))


def test_moe_route_options(device):
    logits = _logits(300, 256, torch.bfloat16, 7).to(device)
    bias = _bias(256, 8, 0.05).to(device)
    options = dict(score="sigmoid", bias=bias, num_groups=8, topk_groups=4, scaling=2.5, gate_dtype=torch.bfloat16)
    routing = gpuprim.moe_route(logits, 8, capacity=40, pad_to=8, **options)
    gates, ids = _call(logits, 8, **options)
    assert torch.equal(routing.expert_ids, ids) and torch.equal(routing.gates, gates)
    counts = torch.bincount(ids.flatten().cpu(), minlength=256).clamp(max=40)
    assert torch.equal(routing.counts.cpu(), counts)


def test_bad_options(device):
    x = torch.randn(4, 16, device=device)
    with pytest.raises(ValueError, match=r"gpuprim.topk_gating: bias must be 1-D \[num_experts = 16\]"):
        gpuprim.topk_gating(x, 2, bias=torch.zeros(15, device=device))
    with pytest.raises(TypeError, match="gpuprim.topk_gating: bias must be a floating-point tensor"):
        gpuprim.topk_gating(x, 2, bias=torch.zeros(16, dtype=torch.long, device=device))
    with pytest.raises(ValueError, match="gpuprim.topk_gating: num_groups must be >= 1 and a divisor of the number"):
        gpuprim.topk_gating(x, 2, num_groups=3, topk_groups=1)
    with pytest.raises(ValueError, match="gpuprim.topk_gating: topk_groups must be given together with num_groups"):
        gpuprim.topk_gating(x, 2, num_groups=4)
    with pytest.raises(ValueError, match=r"gpuprim.topk_gating: topk_groups must be in \[1, num_groups = 4\]"):
        gpuprim.topk_gating(x, 2, num_groups=4, topk_groups=5)
    with pytest.raises(ValueError, match="gpuprim.topk_gating: k must be <= topk_groups \\* experts per group = 4"):
        gpuprim.topk_gating(x, 5, num_groups=4, topk_groups=1)
    with pytest.raises(TypeError, match="gpuprim.topk_gating: gate_dtype must be float32, float16 or bfloat16"):
        gpuprim.topk_gating(x, 2, gate_dtype=torch.float64)
    for scaling in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="gpuprim.topk_gating: scaling must be finite"):
            gpuprim.topk_gating(x, 2, scaling=scaling)
    with pytest.raises(ValueError, match="gpuprim.moe_route: num_groups"):
        gpuprim.moe_route(x, 2, num_groups=3, topk_groups=1)
    with pytest.raises(TypeError, match="gpuprim.moe_route: gate_dtype must be"):
        gpuprim.moe_route(x, 2, gate_dtype=torch.float64)


# ---------------------------------------------------------------- CUDA-only
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu_bitwise(dtype):
    for tokens, experts, k, groups in [(5000, 8, 2, (4, 2)), (3000, 64, 6, (8, 3)), (4096, 256, 8, (8, 4)),
                                       (500, 1000, 32, (8, 4)), (300, 1024, 8, (64, 8)), (200, 96, 2, (96, 5))]:
        for ties in (False, True):
            logits = _logits(tokens, experts, dtype, experts, ties)
            logits[0, 0] = float("nan")
            logits[1, :] = float("-inf")
            bias = _bias(experts, 3, 0.01)
            for score in ("softmax", "sigmoid"):
                for renormalize in (True, False):
                    for options in (dict(bias=bias), dict(num_groups=groups[0], topk_groups=groups[1]),
                                    dict(bias=bias, num_groups=groups[0], topk_groups=groups[1], scaling=2.5,
                                         gate_dtype=torch.bfloat16), dict(scaling=0.5)):
                        cpu_gates, cpu_ids = _call(logits, k, score=score, renormalize=renormalize, **options)
                        cuda_options = {n: (v.cuda() if isinstance(v, torch.Tensor) else v) for n, v in options.items()}
                        cuda_gates, cuda_ids = _call(logits.cuda(), k, score=score, renormalize=renormalize,
                                                     **cuda_options)
                        assert torch.equal(cuda_ids.cpu(), cpu_ids), (experts, score, renormalize, options.keys())
                        assert torch.equal(torch.isnan(cuda_gates.cpu()), torch.isnan(cpu_gates))
                        assert_bitwise_equal(torch.nan_to_num(cuda_gates.cpu()), torch.nan_to_num(cpu_gates), "gates")


def _close_call_logits(tokens, experts, seed):
    """Rows whose sigmoid scores sit closer together than the CUDA kernel's fast sigmoid can tell apart (steps of
    1e-7 .. 1e-3 around a random centre, shuffled), saturated rows, quantized rows with exact ties, and ordinary
    ones with spreads from 0.5 to 8: the exact ranking must decide every close call."""
    g = torch.Generator().manual_seed(seed)
    step = torch.tensor([1e-7, 1e-6, 1e-5, 1e-4, 1e-3])[torch.randint(0, 5, (tokens, 1), generator=g)]
    centre = torch.randn(tokens, 1, generator=g) * 3
    order = torch.rand(tokens, experts, generator=g).argsort(-1).float()
    close = centre + step * order
    spread = torch.tensor([0.5, 2.0, 8.0, 40.0])[torch.randint(0, 4, (tokens, 1), generator=g)]
    ordinary = torch.randn(tokens, experts, generator=g) * spread
    kind = torch.randint(0, 3, (tokens, 1), generator=g)
    logits = torch.where(kind == 0, close, ordinary)
    return torch.where(kind == 1, (logits * 4).round() / 4, logits)


@pytest.mark.gpu
@pytest.mark.parametrize("experts,groups,k", [(256, (8, 4), 8), (64, (8, 3), 6), (512, (8, 4), 8), (1024, (32, 4), 8),
                                              (256, (1, 1), 8), (256, (8, 8), 8), (256, (8, 4), 20)])
@pytest.mark.parametrize("bias_scale", [0.0, 0.01, 1.0, 30.0])
def test_cuda_close_calls_match_cpu_bitwise(experts, groups, k, bias_scale):
    """The group-limited sigmoid router on CUDA ranks by a fast sigmoid and re-ranks exactly every token with a
    close call: the choices and gates must still be the CPU's, bit for bit, for near ties of every size."""
    logits = _close_call_logits(6001, experts, experts + int(bias_scale))
    bias = _bias(experts, 5, bias_scale) if bias_scale else None
    for dtype in DTYPES:
        x = logits.to(dtype)
        options = dict(score="sigmoid", renormalize=True, bias=bias, num_groups=groups[0], topk_groups=groups[1],
                       scaling=2.5)
        cpu_gates, cpu_ids = _call(x, k, **options)
        cuda_gates, cuda_ids = _call(x.cuda(), k, **{n: (v.cuda() if isinstance(v, torch.Tensor) else v)
                                                     for n, v in options.items()})
        wrong = (cuda_ids.cpu() != cpu_ids).any(-1).nonzero().flatten()
        assert wrong.numel() == 0, f"{dtype}: {wrong.numel()} tokens differ, first {wrong[:5].tolist()}"
        assert_bitwise_equal(cuda_gates.cpu(), cpu_gates, f"gates {dtype}")


@pytest.mark.gpu
def test_cuda_beyond_the_fused_kernel():
    logits = torch.randn(50, 2000, device="cuda")
    gates, ids = gpuprim.topk_gating(logits, 40, scaling=2.0, gate_dtype=torch.bfloat16)  # plain path, then cast
    plain, plain_ids = gpuprim.topk_gating(logits, 40)
    assert torch.equal(ids, plain_ids)
    assert_bitwise_equal(gates, (plain * 2.0).to(torch.bfloat16), "gates")
    with pytest.raises(ValueError, match="of at most 1024 experts and k <= 32 on CUDA with bias or num_groups"):
        gpuprim.topk_gating(logits, 8, bias=torch.zeros(2000, device="cuda"))


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    logits = torch.randn(16384, 256, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(256, device="cuda") * 0.01
    check_no_sync_and_graph_capture(lambda: gpuprim.topk_gating(logits, 8, "sigmoid", bias=bias, num_groups=8,
                                                                topk_groups=4, scaling=2.5))
    check_no_sync_and_graph_capture(lambda: gpuprim.moe_route(logits, 8, score="sigmoid", bias=bias, num_groups=8,
                                                              topk_groups=4, gate_dtype=torch.bfloat16)[:2])
    leaf = logits.float().requires_grad_()

    def step():
        gates, _ = gpuprim.topk_gating(leaf, 8, "sigmoid", bias=bias, num_groups=8, topk_groups=4, scaling=2.5)
        (grad,) = torch.autograd.grad(gates.sum(), leaf)
        return grad

    check_no_sync_and_graph_capture(step)
