"""gpuprim.moe_aux_loss (Switch load balancing, router z-loss) and gpuprim.moe_update_bias (auxiliary-loss-free
balancing) against their PyTorch formulas (HF's load_balancing_loss_func; DeepSeek-V3's bias update)."""
import pytest
import torch

import gpuprim
from op_checks import (
    assert_deterministic,
    check_compiled_backward,
    check_compiles,
    check_no_sync_and_graph_capture,
    run_opcheck,
)


def reference_switch(ids, probs):
    experts = probs.shape[-1]
    expert_mask = torch.nn.functional.one_hot(ids, experts).float()  # [T, k, E]
    tokens_per_expert = expert_mask.mean(0)
    return (tokens_per_expert * probs.float().mean(0).unsqueeze(0)).sum() * experts


def reference_z(logits):
    return torch.logsumexp(logits.float(), -1).square().mean()


def _logits(tokens, experts, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(tokens, experts, generator=g) * 2).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_switch_and_z_match_reference(device, dtype):
    for tokens, experts, k in [(1, 4, 1), (100, 8, 2), (257, 64, 6), (64, 256, 8)]:
        logits = _logits(tokens, experts, tokens, dtype).to(device)
        routing = gpuprim.moe_route(logits, k, capacity=2)  # drops do not change the counts used
        loss = gpuprim.moe_aux_loss(routing, logits)
        expected = reference_switch(routing.expert_ids, torch.softmax(logits.float(), -1))
        assert loss.dtype == torch.float32 and loss.shape == ()
        torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)
        probs = torch.sigmoid(logits.float())
        probs = probs / probs.sum(-1, keepdim=True)
        torch.testing.assert_close(gpuprim.moe_aux_loss(routing, probs=probs), reference_switch(routing.expert_ids,
                                                                                                 probs))
        torch.testing.assert_close(gpuprim.moe_aux_loss(routing, logits, kind="z"), reference_z(logits))
        torch.testing.assert_close(gpuprim.moe_aux_loss(None, logits, kind="z"), reference_z(logits))


def test_balanced_switch_loss_is_one(device):
    ids = torch.arange(16, device=device).remainder(4).view(16, 1)
    probs = torch.full((16, 4), 0.25, device=device)
    loss = torch.ops.gpuprim.moe_aux_loss.default(ids, probs, 4, "switch", False)
    torch.testing.assert_close(loss, torch.tensor(1.0, device=device))


def test_gradients(device):
    logits = _logits(50, 16, 3).to(device).requires_grad_()
    routing = gpuprim.moe_route(logits, 2)
    for kind in ("switch", "z"):
        (ours,) = torch.autograd.grad(gpuprim.moe_aux_loss(routing, logits, kind=kind), logits)
        expected = reference_switch(routing.expert_ids, torch.softmax(logits, -1)) if kind == "switch" \
            else reference_z(logits)
        (theirs,) = torch.autograd.grad(expected, logits)
        torch.testing.assert_close(ours, theirs)


def test_update_bias(device):
    bias = torch.tensor([0.0, 0.5, -0.25, 1.0, 0.0], device=device)
    counts = torch.tensor([10, 2, 6, 6, 6], device=device)  # mean 6
    out = gpuprim.moe_update_bias(bias, counts, 0.001)
    expected = bias + 0.001 * torch.sign(counts.float().mean() - counts.float())
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    assert out.dtype == bias.dtype and bias[0] == 0.0  # not in place
    # Integer counts compare exactly where a float mean would round: mean of [1, 1, 2^53 - 2] is not exact.
    big = torch.tensor([2**40 + 1, 2**40, 2**40 - 1], device=device)
    assert gpuprim.moe_update_bias(torch.zeros(3, device=device), big, 1.0).tolist() == [-1.0, 0.0, 1.0]
    half = gpuprim.moe_update_bias(bias.to(torch.bfloat16), counts, 0.5)
    assert half.dtype == torch.bfloat16


def test_deterministic(device):
    logits = _logits(4096, 64, 1).to(device)
    routing = gpuprim.moe_route(logits, 4)
    assert_deterministic(lambda: gpuprim.moe_aux_loss(routing, logits), runs=3)
    assert_deterministic(lambda: gpuprim.moe_aux_loss(routing, logits, kind="z"), runs=3)


def test_opcheck(device):
    logits = _logits(20, 8, 2).to(device).requires_grad_()
    ids = gpuprim.moe_route(logits.detach(), 2).expert_ids
    run_opcheck(torch.ops.gpuprim.moe_aux_loss.default, (ids, logits, 8, "switch", True))
    run_opcheck(torch.ops.gpuprim.moe_aux_loss.default, (ids, logits, 8, "z", True))
    run_opcheck(torch.ops.gpuprim.moe_update_bias.default, (torch.zeros(8, device=device),
                                                            torch.arange(8, device=device), 0.01))


def test_compile(device):
    def f(x, bias):
        routing = gpuprim.moe_route(x, 2, score="sigmoid", bias=bias)
        loss = gpuprim.moe_aux_loss(routing, x) + 1e-3 * gpuprim.moe_aux_loss(routing, x, kind="z")
        return loss, gpuprim.moe_update_bias(bias, routing.counts, 0.001)

    check_compiles(f, torch.randn(64, 8, device=device), torch.zeros(8, device=device))

    def step(x):
        routing = gpuprim.moe_route(x, 2)
        return gpuprim.moe_aux_loss(routing, x) + gpuprim.moe_aux_loss(routing, x, kind="z")

    check_compiled_backward(step, torch.randn(32, 8, device=device, requires_grad=True))


def test_bad_arguments(device):
    logits = torch.randn(4, 8, device=device)
    routing = gpuprim.moe_route(logits, 2)
    with pytest.raises(ValueError, match="gpuprim.moe_aux_loss: kind must be 'switch' or 'z'"):
        gpuprim.moe_aux_loss(routing, logits, kind="gshard")
    with pytest.raises(ValueError, match="gpuprim.moe_aux_loss: scores must be logits for kind='z'"):
        gpuprim.moe_aux_loss(routing, probs=torch.softmax(logits, -1), kind="z")
    with pytest.raises(ValueError, match="give exactly one of logits and probs"):
        gpuprim.moe_aux_loss(routing)
    with pytest.raises(ValueError, match=r"gpuprim.moe_aux_loss: expert_ids must be 2-D \[tokens = 3, k\]"):
        gpuprim.moe_aux_loss(routing, logits[:3])
    with pytest.raises(ValueError, match="gpuprim.moe_update_bias: counts must be of bias' shape"):
        gpuprim.moe_update_bias(torch.zeros(8, device=device), torch.zeros(7, device=device), 0.1)
    for rate in (-0.001, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"gpuprim.moe_update_bias: rate must be finite and >= 0, got"):
            gpuprim.moe_update_bias(torch.zeros(8, device=device), torch.zeros(8, device=device), rate)


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    logits = torch.randn(16384, 256, device="cuda")
    bias = torch.zeros(256, device="cuda")
    routing = gpuprim.moe_route(logits, 8, score="sigmoid", bias=bias, num_groups=8, topk_groups=4)
    check_no_sync_and_graph_capture(lambda: gpuprim.moe_aux_loss(routing, logits))
    check_no_sync_and_graph_capture(lambda: gpuprim.moe_aux_loss(routing, logits, kind="z"))
    check_no_sync_and_graph_capture(lambda: gpuprim.moe_update_bias(bias, routing.counts, 0.001))
