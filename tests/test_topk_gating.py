"""gpuprim.topk_gating (MoE router: score, top-k, renormalize) against a pure-PyTorch reference.

expert_ids are compared exactly (ranking by logit, ties to the lower expert index, NaN first); gates
against torch's softmax / sigmoid + gather + renormalize within fp32 rounding. CUDA and CPU give the
same bits (the kernels share gating_math.h), checked on the GPU.
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
    run_opcheck,
)

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def reference_gating(logits, k, score, renormalize):
    wide = logits.detach().cpu().double()
    ids = torch.sort(wide, dim=-1, stable=True, descending=True).indices[:, :k]  # NaN first, ties by index
    f = logits.detach().cpu().float()
    scores = torch.softmax(f, -1) if score == "softmax" else torch.sigmoid(f)
    gates = scores.gather(1, ids)
    if renormalize:
        gates = gates / gates.sum(-1, keepdim=True)
    return gates, ids


def check_gating(logits, k, score="softmax", renormalize=True):
    gates, ids = gpuprim.topk_gating(logits, k, score, renormalize)
    assert gates.dtype == torch.float32 and ids.dtype == torch.int64
    assert gates.shape == (logits.size(0), k) and ids.shape == (logits.size(0), k)
    assert gates.device == logits.device and ids.device == logits.device
    ref_gates, ref_ids = reference_gating(logits, k, score, renormalize)
    assert torch.equal(ids.cpu(), ref_ids), "expert_ids differ from the tie-contract reference"
    torch.testing.assert_close(gates.cpu(), ref_gates, rtol=2e-6, atol=1e-7, equal_nan=True)
    return gates, ids


def _logits(tokens, experts, dtype, seed, ties=False):
    g = torch.Generator().manual_seed(seed)
    if ties:
        return torch.randint(-3, 3, (tokens, experts), generator=g).to(dtype)
    return (torch.randn(tokens, experts, generator=g) * 3).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
@pytest.mark.parametrize("renormalize", [True, False])
def test_matches_reference(device, dtype, score, renormalize):
    for tokens, experts, ks in [(1, 1, (0, 1)), (37, 8, (1, 2, 8)), (100, 64, (1, 2, 6, 8, 32)),
                                (50, 128, (8, 33)), (20, 257, (4, 32)), (10, 512, (8,)), (6, 1000, (8, 40, 1000)),
                                (0, 16, (4,))]:
        for ties in (False, True):
            logits = _logits(tokens, experts, dtype, tokens + experts, ties).to(device)
            for k in ks:
                check_gating(logits, k, score, renormalize)


def test_special_logits(device):
    logits = torch.tensor([[0.0, -0.0, 1.0, 1.0, float("-inf"), 2.0, 1.0, -1.0],
                           [float("-inf")] * 7 + [0.0],
                           [5.0] * 8,
                           [1.0, float("nan"), 0.0, 3.0, 2.0, 2.0, 1.0, 0.0]], device=device)
    for score in ("softmax", "sigmoid"):
        for renormalize in (True, False):
            gates, ids = check_gating(logits, 3, score, renormalize)
            assert ids[0].tolist() == [5, 2, 3] and ids[2].tolist() == [0, 1, 2] and ids[3].tolist()[0] == 1
            assert bool(torch.isnan(gates[3]).all() if score == "softmax" else torch.isnan(gates[3, 0]))


def test_noncontiguous(device):
    base = _logits(64, 40, torch.float32, 3).to(device)
    for logits in (base.t().contiguous().t(), base[::2], base[:, 5:37]):
        check_gating(logits, 4)


@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
def test_bitwise_reproducible(device, score):
    logits = _logits(4096, 64, torch.float32, 9, ties=True).to(device)
    assert_deterministic(lambda: gpuprim.topk_gating(logits, 6, score, False), runs=3)
    assert_deterministic(lambda: gpuprim.topk_gating(logits, 6, score, True), runs=3)


def test_opcheck(device):
    for dtype in DTYPES:
        logits = _logits(33, 16, dtype, 4).to(device)
        run_opcheck(torch.ops.gpuprim.topk_gating.default, (logits, 4, "softmax", True))
        run_opcheck(torch.ops.gpuprim.topk_gating.default, (logits, 2, "sigmoid", False))
    logits = _logits(9, 12, torch.float32, 5).to(device).requires_grad_()
    for score in ("softmax", "sigmoid"):
        for renormalize in (True, False):
            run_opcheck(torch.ops.gpuprim.topk_gating.default, (logits, 3, score, renormalize))


@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
@pytest.mark.parametrize("renormalize", [True, False])
def test_gradcheck(device, score, renormalize):
    # float64 logits are not an input dtype: check the backward against autograd of the torch reference.
    logits = _logits(12, 10, torch.float32, 6).to(device).requires_grad_()
    grad = torch.randn(12, 3, device=device)
    (ours,) = torch.autograd.grad(gpuprim.topk_gating(logits, 3, score, renormalize)[0], logits, grad)
    ids = gpuprim.topk_gating(logits.detach(), 3, score, renormalize)[1]
    scores = torch.softmax(logits, -1) if score == "softmax" else torch.sigmoid(logits)
    gates = scores.gather(1, ids)
    if renormalize:
        gates = gates / gates.sum(-1, keepdim=True)
    (theirs,) = torch.autograd.grad(gates, logits, grad)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    # And a finite-difference check of the backward formula itself, in float64 arithmetic.
    def f(t):
        return gpuprim.topk_gating(t.float(), 3, score, renormalize)[0].double()
    x = _logits(4, 6, torch.float32, 8).double().to(device).requires_grad_()
    assert torch.autograd.gradcheck(f, (x,), eps=1e-3, atol=2e-3, rtol=1e-2)


def test_grad_fp16(device):
    logits = _logits(8, 16, torch.float16, 1).to(device).requires_grad_()
    gates, _ = gpuprim.topk_gating(logits, 2)
    (grad,) = torch.autograd.grad(gates.sum() + (gates[:, 0] ** 2).sum(), logits)
    assert grad.dtype == torch.float16 and bool(torch.isfinite(grad).all())


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        gates, ids = gpuprim.topk_gating(x * 2, 2)
        return gates * 3, ids

    check_compiles(f, torch.randn(64, 8, device=device), dynamic=dynamic)
    check_compiles(f, torch.randn(17, 16, device=device), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    def step(x):
        gates, ids = gpuprim.topk_gating(x, 2, "softmax", True)
        return (gates * ids.float()).sum()

    check_compiled_backward(step, torch.randn(32, 8, device=device, requires_grad=True))


def test_bad_arguments(device):
    x = torch.randn(4, 8, device=device)
    with pytest.raises(ValueError, match=r"gpuprim.topk_gating: k must be in \[0, 8\] \(the number of experts\)"):
        gpuprim.topk_gating(x, 9)
    with pytest.raises(ValueError, match=r"gpuprim.topk_gating: k must be in \[0, 8\]"):
        gpuprim.topk_gating(x, -1)
    with pytest.raises(ValueError, match="gpuprim.topk_gating: score must be \"softmax\" or \"sigmoid\", got relu"):
        gpuprim.topk_gating(x, 2, "relu")
    with pytest.raises(ValueError, match=r"gpuprim.topk_gating: logits must be 2-D \[tokens, experts\]"):
        gpuprim.topk_gating(x.reshape(2, 2, 8), 2)
    with pytest.raises(TypeError, match="gpuprim.topk_gating: logits must be float32, float16 or bfloat16, got Double"):
        gpuprim.topk_gating(x.double(), 2)


# ---------------------------------------------------------------- CUDA-only: bits equal to the CPU kernel
def _assert_same_gates(a, b):
    assert torch.equal(torch.isnan(a.cpu()), torch.isnan(b.cpu()))
    assert_bitwise_equal(torch.nan_to_num(a.cpu(), nan=0.0), torch.nan_to_num(b.cpu(), nan=0.0), "gates")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu_bitwise(dtype):
    # Fused path (E <= 512, k <= 32) and the general path (topk, then the gates kernel).
    for tokens, experts, ks in [(5000, 8, (1, 2, 8)), (3000, 64, (2, 6, 32)), (1000, 128, (8, 33)),
                                (333, 300, (4,)), (200, 512, (8, 32)), (100, 513, (8,)), (50, 4000, (1, 64, 2100))]:
        for ties in (False, True):
            logits = _logits(tokens, experts, dtype, experts, ties)
            logits[0, 0] = float("nan")
            logits[1, :] = float("-inf")
            for k in ks:
                for score in ("softmax", "sigmoid"):
                    for renormalize in (True, False):
                        cpu_gates, cpu_ids = gpuprim.topk_gating(logits, k, score, renormalize)
                        cuda_gates, cuda_ids = gpuprim.topk_gating(logits.cuda(), k, score, renormalize)
                        assert torch.equal(cuda_ids.cpu(), cpu_ids)
                        _assert_same_gates(cuda_gates, cpu_gates)


@pytest.mark.gpu
def test_cuda_full_rows_special_logits():
    """fp32 tokens of exactly G * 16 experts (the group path's kernel without per-element masks, and on sm_90
    without a NaN select): NaN logits of any sign or payload rank first, -0.0 == +0.0; ids and gates as on CPU."""
    g = torch.Generator().manual_seed(9)
    for experts in (32, 64, 128, 256):
        logits = torch.randn(300, experts, generator=g)
        raw = logits.view(torch.int32)
        raw[::3, 5] = 0xFFC00001 - (1 << 32)  # -NaN with a payload
        raw[1::3, 7] = 0x7F800001  # signalling NaN
        logits[2::3, 3] = float("nan")
        logits[:, 9] = -0.0
        logits[:, 11] = 0.0
        for k in (1, 2, 8, 9, 16):
            for score, renormalize in (("softmax", True), ("sigmoid", False)):
                cpu_gates, cpu_ids = gpuprim.topk_gating(logits, k, score, renormalize)
                cuda_gates, cuda_ids = check_gating(logits.cuda(), k, score, renormalize)
                assert torch.equal(cuda_ids.cpu(), cpu_ids)
                _assert_same_gates(cuda_gates, cpu_gates)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_group_path_ties(dtype):
    """The G-lanes group path (renormalize or sigmoid, E <= 512): fp32 rank words keep only the high
    key bits, so tokens whose best k + 1 logits share them (equal or low-bit neighbours) take the
    exact redo; ids must still match the tie contract exactly."""
    g = torch.Generator().manual_seed(5)
    for experts in (64, 100, 128):
        near = (1.0 + torch.randint(0, 100, (300, experts), generator=g).double() * 2.0**-23).to(dtype)
        mixed = torch.randn(300, experts, generator=g).to(dtype)
        mixed[::4, 3] = mixed[::4, 7]
        for logits in (near, mixed, _logits(300, experts, dtype, experts, True)):
            for k in (1, 2, 7, 8, 9, 16):
                for score, renormalize in (("softmax", True), ("sigmoid", False)):
                    cpu_gates, cpu_ids = gpuprim.topk_gating(logits, k, score, renormalize)
                    cuda_gates, cuda_ids = check_gating(logits.cuda(), k, score, renormalize)
                    assert torch.equal(cuda_ids.cpu(), cpu_ids)
                    _assert_same_gates(cuda_gates, cpu_gates)


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    logits = torch.randn(32768, 128, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.topk_gating(logits, 8))
    check_no_sync_and_graph_capture(lambda: gpuprim.topk_gating(logits[:, :64], 2, "sigmoid", False))
    wide = torch.randn(64, 1000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.topk_gating(wide, 40))  # general path


@pytest.mark.parametrize("options", [{}, {"scaling": 2.5, "gate_dtype": torch.bfloat16}], ids=["plain", "scaled_bf16"])
def test_no_grad_fast_path(device, options):
    """Without a gradient to record the fused kernel applies scaling and gate_dtype: the same bits as the
    autograd Function's multiply and cast."""
    x = torch.randn(40, 64, device=device)
    check_no_grad_fast_path(lambda t: gpuprim.topk_gating(t, 4, **options), x)
