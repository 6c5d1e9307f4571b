"""gpuprim MoE routing (moe_route_metadata, moe_permute, moe_unpermute, moe_route) against pure-PyTorch
references, on CPU and CUDA.

Tests of the metadata, permute and unpermute ops take expert_ids/gates from `reference_gating` below (softmax in
fp32, stable top-k by (-score, index)), so they do not depend on torch.ops.gpuprim.topk_gating; the tests of
gpuprim.moe_route itself call the real topk_gating op and are skipped while it is not built into the library.
"""
import math

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
    run_example,
    run_opcheck,
)

HAS_TOPK_GATING = hasattr(torch.ops.gpuprim, "topk_gating")
needs_topk_gating = pytest.mark.skipif(not HAS_TOPK_GATING, reason="torch.ops.gpuprim.topk_gating not built yet")


# ---------------------------------------------------------------- references
def reference_gating(logits, k, renormalize=True):
    """Softmax in fp32, the k highest scores per token (ties to the lower expert index), renormalized."""
    scores = logits.float().softmax(-1)
    expert_ids = torch.sort(-scores, dim=-1, stable=True).indices[:, :k]
    gates = scores.gather(1, expert_ids)
    if renormalize:
        gates = gates / gates.sum(-1, keepdim=True)
    return expert_ids, gates


def reference_metadata(expert_ids, gates, num_experts, capacity=None, pad_to=1, drop="position"):
    """Plain Python over (token, choice) pairs in flat order; returns CPU int64 tensors."""
    ids = expert_ids.cpu().long().reshape(-1).tolist()
    g = gates.detach().cpu().float().reshape(-1).tolist()
    tokens, k = expert_ids.shape
    n = len(ids)
    routed = [[] for _ in range(num_experts)]
    for flat, e in enumerate(ids):
        if 0 <= e < num_experts:
            routed[e].append(flat)
    keep = [False] * n
    for pairs in routed:
        chosen = pairs
        if capacity is not None:
            if drop == "score":  # highest gate first, ties to the lower flat (token) index
                chosen = sorted(pairs, key=lambda f: (-g[f], f))[:capacity]
            else:
                chosen = pairs[:capacity]
        for f in chosen:
            keep[f] = True
    counts = [sum(keep[f] for f in pairs) for pairs in routed]
    padded = [math.ceil(c / pad_to) * pad_to for c in counts]
    offsets = [0]
    for p in padded:
        offsets.append(offsets[-1] + p)
    if capacity is not None:
        rows = num_experts * math.ceil(capacity / pad_to) * pad_to
    else:
        rows = n + num_experts * (pad_to - 1)
    slots, token_ids, cursor = [-1] * n, [-1] * rows, offsets[:-1]
    for flat in range(n):
        if keep[flat]:
            row = cursor[ids[flat]]
            cursor[ids[flat]] += 1
            slots[flat], token_ids[row] = row, flat // k
    as_t = lambda v: torch.tensor(v, dtype=torch.int64)  # noqa: E731
    return (as_t(counts), as_t(offsets), as_t(slots).reshape(tokens, k), as_t(token_ids), as_t([n - sum(counts)]))


def reference_permute(hidden, token_ids):
    valid = token_ids >= 0
    if hidden.size(0) == 0:
        return torch.zeros(token_ids.numel(), hidden.size(1), dtype=hidden.dtype)
    out = hidden[token_ids.clamp(min=0)]
    return torch.where(valid[:, None], out, torch.zeros((), dtype=hidden.dtype))


def reference_unpermute(expert_out, slots, gates=None):
    """fp32 (fp64 for fp64) accumulation, one rounded multiply and add per choice in the order j = 0..k-1."""
    acc_type = torch.float64 if expert_out.dtype == torch.float64 else torch.float32
    tokens, k = slots.shape
    acc = torch.zeros(tokens, expert_out.size(1), dtype=acc_type)
    x = expert_out.detach().cpu().to(acc_type)
    s = slots.cpu()
    w = gates.detach().cpu().to(acc_type) if gates is not None else torch.ones(tokens, k, dtype=acc_type)
    if expert_out.size(0) == 0:
        return acc.to(expert_out.dtype)
    for j in range(k):
        valid = s[:, j] >= 0
        term = w[:, j:j + 1] * x[s[:, j].clamp(min=0)]
        acc = torch.where(valid[:, None], acc + term, acc)
    return acc.to(expert_out.dtype)


# ---------------------------------------------------------------- samples
# (name, tokens, experts, k, capacity, pad_to, drop, logits kind)
METADATA_CASES = [
    ("basic", 37, 8, 2, None, 1, "position", "randn"),
    ("all_to_one", 20, 6, 1, None, 1, "position", "one_hot"),
    ("all_to_one_capacity", 20, 6, 2, 5, 1, "position", "one_hot"),
    ("zero_token_experts", 10, 64, 2, None, 8, "position", "randn"),
    ("empty", 0, 5, 2, None, 16, "position", "randn"),
    ("empty_capacity", 0, 5, 2, 3, 8, "score", "randn"),
    ("one_expert", 9, 1, 1, None, 1, "position", "randn"),
    ("one_expert_capacity", 9, 1, 1, 4, 8, "score", "randn"),
    ("k_equals_e", 13, 4, 4, None, 1, "position", "randn"),
    ("k8", 50, 16, 8, None, 16, "position", "randn"),
    ("drop_position", 64, 8, 2, 9, 1, "position", "randn"),
    ("drop_score", 64, 8, 2, 9, 1, "score", "randn"),
    ("drop_score_pad", 64, 8, 2, 9, 8, "score", "randn"),
    ("capacity_zero", 15, 4, 2, 0, 1, "position", "randn"),
    ("capacity_zero_pad", 15, 4, 2, 0, 16, "score", "randn"),
    ("capacity_above", 15, 4, 2, 100, 16, "position", "randn"),
    ("pad128", 33, 4, 2, None, 128, "position", "randn"),
    ("ties", 40, 8, 2, None, 8, "position", "ties"),
    ("ties_drop_score", 40, 8, 2, 3, 1, "score", "ties"),
    # CUDA: more than one 2048-pair chunk (one cooperative launch up to 32 tiles, capacity spread over tiles), and
    # more experts than the sort-free path takes (the radix-sort path).
    ("multi_tile", 1100, 16, 8, None, 16, "position", "randn"),
    ("multi_tile_capacity", 1100, 16, 8, 300, 8, "position", "skewed"),
    ("multi_tile_drop_score", 1100, 16, 8, 300, 8, "score", "skewed"),
    ("e1500", 200, 1500, 4, None, 2, "position", "randn"),
    ("e1500_drop_score", 200, 1500, 4, 1, 1, "score", "randn"),
    ("e1024", 300, 1024, 8, None, 1, "position", "randn"),
    ("e1024_capacity", 300, 1024, 8, 2, 16, "score", "skewed"),
    ("e1024_pad", 64, 1024, 2, None, 8, "position", "randn"),
    ("e1024_32_tiles", 8000, 1024, 8, 40, 8, "score", "skewed"),
    ("e1500_tiles", 2000, 1500, 4, None, 1, "position", "randn"),
]
# CUDA vs CPU only (too big for the pure-Python reference): 33 tiles, one more than the cooperative launch takes
# (count, prefix and route kernels); more than 256 tiles of 2048 pairs, so the per-expert prefix over tiles takes
# several rounds, with a capacity spread over many tiles; and more than 2048 chunks of 2048
# pairs, so that a tile (block) ranks several chunks in turn.
LARGE_METADATA_CASES = [
    ("33_tiles", 8300, 64, 8, None, 1, "position", "randn"),
    ("many_tiles", 70000, 32, 8, None, 4, "position", "randn"),
    ("many_tiles_capacity", 70000, 128, 8, 3000, 8, "position", "skewed"),
    ("chunks_per_tile", 600000, 64, 8, None, 16, "position", "randn"),
    ("chunks_per_tile_capacity", 600000, 64, 8, 70000, 8, "position", "skewed"),
]


def make_logits(tokens, experts, kind, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    if kind == "one_hot":  # every token prefers expert 2 (or 0 if E < 3), then the next
        logits = torch.zeros(tokens, experts)
        logits[:, min(2, experts - 1)] = 10.0
        logits[:, 0] += 5.0 if experts > 2 else 0.0
    elif kind == "ties":  # quantized logits: many exactly equal scores and gates
        logits = torch.randint(0, 3, (tokens, experts), generator=g).float()
    elif kind == "skewed":  # a few hot experts overflow their capacity
        logits = torch.randn(tokens, experts, generator=g)
        logits[:, :4] += 4.0
    else:
        logits = torch.randn(tokens, experts, generator=g)
    return logits.to(dtype)


def metadata_case(case, device):
    name, tokens, experts, k, capacity, pad_to, drop, kind = case
    expert_ids, gates = reference_gating(make_logits(tokens, experts, kind), k)
    return expert_ids.to(device), gates.to(device), experts, capacity, pad_to, drop


def routing_for(expert_ids, gates, experts, capacity=None, pad_to=1, drop="position"):
    meta = gpuprim.moe_route_metadata(expert_ids, gates, experts, capacity, pad_to, drop)
    return gpuprim.Routing(expert_ids, gates, *meta)


def assert_metadata_equal(out, ref, what):
    for name, a, b in zip(("counts", "offsets", "slots", "token_ids", "num_dropped"), out, ref):
        assert a.dtype == torch.int64, f"{what}: {name} dtype {a.dtype}"
        assert torch.equal(a.cpu(), b), f"{what}: {name} differs\n{a}\nvs\n{b}"


# ---------------------------------------------------------------- metadata
@pytest.mark.parametrize("case", METADATA_CASES, ids=[c[0] for c in METADATA_CASES])
def test_metadata_matches_reference(case, device):
    expert_ids, gates, experts, capacity, pad_to, drop = metadata_case(case, device)
    out = gpuprim.moe_route_metadata(expert_ids, gates, experts, capacity, pad_to, drop)
    assert all(t.device.type == device for t in out)
    assert_metadata_equal(out, reference_metadata(expert_ids, gates, experts, capacity, pad_to, drop), case[0])
    counts, offsets, slots, token_ids, num_dropped = (t.cpu() for t in out)
    # Invariants the layout promises: padded blocks, padding rows -1, slots and token_ids inverse of each other.
    blocks = offsets[1:] - offsets[:-1]
    assert bool((blocks >= counts).all()) and bool((blocks % pad_to == 0).all())
    kept = slots.reshape(-1)[slots.reshape(-1) >= 0]
    assert kept.numel() == int(counts.sum()) == slots.numel() - int(num_dropped)
    assert torch.equal(token_ids[kept], torch.nonzero(slots.reshape(-1) >= 0).reshape(-1) // max(slots.size(1), 1))
    assert int((token_ids >= 0).sum()) == kept.numel()


def test_metadata_int32_ids_and_out_of_range_ids_reported(device):
    expert_ids = torch.tensor([[0, 3], [7, 1], [-1, 2], [3, 0]], dtype=torch.int32, device=device)
    gates = torch.rand(4, 2, device=device)
    if device == "cpu":  # the CPU checks the ids at the call
        with pytest.raises(IndexError, match=r"expert_ids.flatten\(\)\[2\] = 7 is out of range \[0, 4\)"):
            gpuprim.moe_route_metadata(expert_ids, gates, 4, pad_to=2)
    else:
        out = gpuprim.moe_route_metadata(expert_ids, gates, 4, pad_to=2)
        assert_metadata_equal(out, reference_metadata(expert_ids, gates, 4, pad_to=2), "int32")
        assert int(out[4]) == 2  # ids 7 and -1 are skipped (memory-safe), counted, and reported:
        with pytest.raises(gpuprim.InputError, match=r"expert_ids.flatten\(\)\[2\] = 7 is out of range \[0, 4\)"):
            gpuprim.check_errors()
    with gpuprim.validate():
        with pytest.raises(IndexError, match=r"expert_ids.flatten\(\)\[2\] = 7 is out of range"):
            gpuprim.moe_route_metadata(expert_ids, gates, 4)


def test_metadata_deterministic(device):
    expert_ids, gates, experts, *_ = metadata_case(METADATA_CASES[-2], device)
    for capacity, drop in ((None, "position"), (2, "position"), (2, "score")):
        assert_deterministic(lambda: gpuprim.moe_route_metadata(expert_ids, gates, experts, capacity, 8, drop))


# ---------------------------------------------------------------- permute / unpermute
PERMUTE_CASES = [  # (tokens, experts, k, hidden, capacity, pad_to, drop)
    (37, 8, 2, 64, None, 1, "position"),
    (37, 8, 2, 24, None, 8, "position"),
    (64, 8, 2, 40, 9, 16, "score"),
    (30, 4, 4, 7, None, 1, "position"),  # odd H: the scalar path
    (0, 4, 2, 16, None, 8, "position"),
    (20, 1, 1, 16, 0, 1, "position"),  # everything dropped
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("case", PERMUTE_CASES, ids=lambda c: "T{}E{}k{}H{}c{}p{}{}".format(*c))
def test_permute_unpermute_match_reference(case, dtype, device):
    tokens, experts, k, hidden_size, capacity, pad_to, drop = case
    expert_ids, gates = reference_gating(make_logits(tokens, experts, "randn", seed=1), k)
    routing = routing_for(expert_ids.to(device), gates.to(device), experts, capacity, pad_to, drop)
    hidden = torch.randn(tokens, hidden_size, generator=torch.Generator().manual_seed(2)).to(dtype).to(device)
    permuted = gpuprim.moe_permute(hidden, routing)
    expected = reference_permute(hidden.cpu(), routing.token_ids.cpu())
    assert_bitwise_equal(permuted.cpu(), expected, "permute")  # a copy: exact; padding rows exactly zero
    expert_out = (permuted.float() * 1.5 - 0.25).to(dtype)
    for g in (routing.gates, None):
        out = gpuprim.moe_unpermute(expert_out, routing, g)
        # Same rounding as the reference (fp32 multiply then add, order j): bitwise equal.
        assert_bitwise_equal(out.cpu(), reference_unpermute(expert_out.cpu(), routing.slots.cpu(),
                                                            None if g is None else g.cpu()), "unpermute")


def test_unpermute_backward_matches_reference(device):
    expert_ids, gates = reference_gating(make_logits(40, 8, "randn", seed=3), 2)
    routing = routing_for(expert_ids.to(device), gates.to(device), 8, capacity=8, pad_to=4)
    rows = routing.token_ids.size(0)
    expert_out = torch.randn(rows, 32, device=device, requires_grad=True)
    g = routing.gates.clone().requires_grad_()
    grad = torch.randn(40, 32, device=device)
    gpuprim.moe_unpermute(expert_out, routing, g).backward(grad)
    # Reference: autograd through the pure-torch combine.
    x = expert_out.detach().cpu().requires_grad_()
    gr = g.detach().cpu().requires_grad_()
    s = routing.slots.cpu()
    valid = (s >= 0).unsqueeze(-1)
    ref = (torch.where(valid, x[s.clamp(min=0)], 0.0) * gr.unsqueeze(-1)).sum(1)
    ref.backward(grad.cpu())
    torch.testing.assert_close(expert_out.grad.cpu(), x.grad, rtol=0, atol=0)  # one product each: exact
    torch.testing.assert_close(g.grad.cpu(), gr.grad, rtol=1e-5, atol=1e-5)
    unused = torch.ones(rows, dtype=torch.bool)
    unused[s[s >= 0]] = False
    assert bool((expert_out.grad.cpu()[unused] == 0).all())  # padding / never-used rows get no gradient


def test_unpermute_backward_without_pairs_is_zero(device):
    """T = 0 with padding rows: every row of grad_expert_out is written as zero (no uninitialized memory)."""
    expert_ids = torch.zeros(0, 2, dtype=torch.int64, device=device)
    routing = routing_for(expert_ids, torch.zeros(0, 2, device=device), 4, pad_to=8)
    rows = routing.token_ids.size(0)
    expert_out = torch.randn(rows, 24, device=device)
    grad_x, grad_g = torch.ops.gpuprim.moe_unpermute_backward(torch.zeros(0, 24, device=device), expert_out,
                                                              routing.slots, routing.gates, True)
    assert grad_x.shape == (rows, 24) and bool((grad_x == 0).all()) and grad_g.shape == (0, 2)


def test_permute_backward_is_gather_sum(device):
    expert_ids, gates = reference_gating(make_logits(25, 6, "randn", seed=4), 3)
    routing = routing_for(expert_ids.to(device), gates.to(device), 6, capacity=10, pad_to=8, drop="score")
    hidden = torch.randn(25, 16, device=device, requires_grad=True)
    permuted = gpuprim.moe_permute(hidden, routing)
    grad = torch.randn_like(permuted)
    permuted.backward(grad)
    expected = reference_unpermute(grad.cpu(), routing.slots.cpu())
    assert_bitwise_equal(hidden.grad.cpu(), expected, "permute backward")


def small_double_routing(device, capacity=None, pad_to=1, drop="position"):
    expert_ids, gates = reference_gating(make_logits(7, 4, "randn", seed=5), 2)
    return routing_for(expert_ids.to(device), gates.double().to(device), 4, capacity, pad_to, drop)


@pytest.mark.parametrize("capacity,pad_to", [(None, 1), (2, 4)])
def test_gradcheck(device, capacity, pad_to):
    routing = small_double_routing(device, capacity, pad_to)
    rows = routing.token_ids.size(0)
    hidden = torch.randn(7, 5, dtype=torch.float64, device=device, requires_grad=True)
    expert_out = torch.randn(rows, 5, dtype=torch.float64, device=device, requires_grad=True)
    gates = routing.gates.detach().clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda h: gpuprim.moe_permute(h, routing), (hidden,))
    assert torch.autograd.gradcheck(lambda x, g: gpuprim.moe_unpermute(x, routing, g), (expert_out, gates))
    assert torch.autograd.gradcheck(lambda x: gpuprim.moe_unpermute(x, routing), (expert_out,))
    # The whole chain hidden -> permute -> expert (elementwise) -> unpermute.
    assert torch.autograd.gradcheck(
        lambda h, g: gpuprim.moe_unpermute(torch.tanh(gpuprim.moe_permute(h, routing)), routing, g), (hidden, gates))


def test_deterministic_permute_unpermute(device):
    expert_ids, gates = reference_gating(make_logits(200, 16, "randn", seed=6), 4)
    routing = routing_for(expert_ids.to(device), gates.to(device), 16, pad_to=16)
    hidden = torch.randn(200, 48, device=device, requires_grad=True)

    def run():
        hidden.grad = None
        permuted = gpuprim.moe_permute(hidden, routing)
        out = gpuprim.moe_unpermute(permuted * 2, routing, routing.gates)
        out.backward(torch.ones_like(out))
        return permuted, out, hidden.grad.clone()

    assert_deterministic(run)


# ---------------------------------------------------------------- opcheck / compile
def opcheck_samples(device):
    routing = small_double_routing(device, capacity=2, pad_to=4, drop="score")
    rows = routing.token_ids.size(0)
    out = []
    for requires_grad in (False, True):
        hidden = torch.randn(7, 8, dtype=torch.float64, device=device, requires_grad=requires_grad)
        expert_out = torch.randn(rows, 8, dtype=torch.float64, device=device, requires_grad=requires_grad)
        gates = routing.gates.detach().clone().requires_grad_(requires_grad)
        out.append((torch.ops.gpuprim.moe_permute.default, (hidden, routing.token_ids, routing.slots)))
        out.append((torch.ops.gpuprim.moe_unpermute.default, (expert_out, routing.slots, gates)))
        out.append((torch.ops.gpuprim.moe_unpermute.default, (expert_out, routing.slots, None)))
    grad = torch.randn(7, 8, dtype=torch.float64, device=device)
    out.append((torch.ops.gpuprim.moe_unpermute_backward.default,
                (grad, expert_out.detach(), routing.slots, routing.gates, True)))
    out.append((torch.ops.gpuprim.moe_unpermute_backward.default,
                (grad, expert_out.detach(), routing.slots, None, False)))
    hidden16 = torch.randn(7, 8, device=device).to(torch.bfloat16)
    out.append((torch.ops.gpuprim.moe_permute.default, (hidden16, routing.token_ids, routing.slots)))
    return out


def test_opcheck(device):
    for case in (METADATA_CASES[0], METADATA_CASES[4], METADATA_CASES[12], METADATA_CASES[14]):
        expert_ids, gates, experts, capacity, pad_to, drop = metadata_case(case, device)
        run_opcheck(torch.ops.gpuprim.moe_route_metadata.default, (expert_ids, gates, experts, capacity, pad_to, drop))
    for op, args in opcheck_samples(device):
        run_opcheck(op, args)


def moe_step(hidden, expert_ids, gates, weight):
    """Route metadata + permute + a per-row expert op + unpermute: the block a compiled MoE layer runs."""
    meta = torch.ops.gpuprim.moe_route_metadata.default(expert_ids, gates, 8, 6, 4, "score")
    routing = gpuprim.Routing(expert_ids, gates, *meta)
    permuted = gpuprim.moe_permute(hidden, routing)
    return gpuprim.moe_unpermute(torch.tanh(permuted * weight), routing, gates), meta[3]


@pytest.mark.parametrize("dynamic", [False, True])
def test_compiles_fullgraph(device, dynamic):
    expert_ids, gates = reference_gating(make_logits(24, 8, "randn", seed=7), 2)
    hidden = torch.randn(24, 16, device=device)
    check_compiles(moe_step, hidden, expert_ids.to(device), gates.to(device), 1.5, dynamic=dynamic)


def test_compiled_backward(device):
    expert_ids, gates = reference_gating(make_logits(24, 8, "randn", seed=8), 2)
    expert_ids, gates = expert_ids.to(device), gates.to(device).requires_grad_()
    hidden = torch.randn(24, 16, device=device, requires_grad=True)

    def step(h, g):
        return moe_step(h, expert_ids, g, 1.5)[0].square().sum()

    check_compiled_backward(step, hidden, gates)


# ---------------------------------------------------------------- bad input
def test_bad_input():
    ids, gates = reference_gating(make_logits(6, 4, "randn"), 2)
    meta = torch.ops.gpuprim.moe_route_metadata.default
    with pytest.raises(ValueError, match=r"gpuprim.moe_route_metadata: k must be in \[1, num_experts = 1\]"):
        meta(ids, gates, 1)
    with pytest.raises(ValueError, match="gpuprim.moe_route_metadata: capacity must be >= 0"):
        meta(ids, gates, 4, -1)
    with pytest.raises(ValueError, match="gpuprim.moe_route_metadata: pad_to must be >= 1"):
        meta(ids, gates, 4, None, 0)
    with pytest.raises(ValueError, match="gpuprim.moe_route_metadata: drop must be 'position' or 'score'"):
        meta(ids, gates, 4, None, 1, "random")
    with pytest.raises(ValueError, match="gpuprim.moe_route_metadata: expert_ids must be 2-D"):
        meta(ids.reshape(-1), gates.reshape(-1), 4)
    with pytest.raises(TypeError, match="gpuprim.moe_route_metadata: expert_ids must be an int64 or int32"):
        meta(ids.float(), gates, 4)
    with pytest.raises(ValueError, match="gpuprim.moe_route_metadata: gates must be of expert_ids' shape"):
        meta(ids, gates[:, :1], 4)
    with pytest.raises(ValueError, match="gpuprim.moe_route_metadata: num_experts must be >= 1"):
        meta(ids, gates, 0)
    routing = routing_for(ids, gates, 4, pad_to=2)
    with pytest.raises(ValueError, match="gpuprim.moe_permute: hidden must be of routing.slots.size"):
        gpuprim.moe_permute(torch.randn(5, 8), routing)
    with pytest.raises(ValueError, match="gpuprim.moe_permute: hidden must be 2-D"):
        gpuprim.moe_permute(torch.randn(6, 8, 1), routing)
    with pytest.raises(TypeError, match="gpuprim.moe_permute: hidden must be a float16"):
        gpuprim.moe_permute(torch.ones(6, 8, dtype=torch.int32), routing)
    rows = routing.token_ids.size(0)
    with pytest.raises(ValueError, match="gpuprim.moe_unpermute: expert_out must be 2-D with R"):
        gpuprim.moe_unpermute(torch.randn(rows + 1, 8), routing)
    with pytest.raises(ValueError, match="gpuprim.moe_unpermute: gates must be of routing.slots' shape"):
        gpuprim.moe_unpermute(torch.randn(rows, 8), routing, torch.rand(6, 3))
    # Routing from another call's shapes: hidden with a different token count, expert_out of another R.
    other = routing_for(*reference_gating(make_logits(9, 4, "randn"), 2), 4, pad_to=8)
    with pytest.raises(ValueError, match="gpuprim.moe_permute: hidden"):
        gpuprim.moe_permute(torch.randn(6, 8), other)
    with pytest.raises(ValueError, match="gpuprim.moe_unpermute: expert_out"):
        gpuprim.moe_unpermute(torch.randn(rows, 8), other)
    logits = make_logits(6, 4, "randn")
    with pytest.raises(ValueError, match=r"gpuprim.moe_route: k must be in \[1, num_experts = 4\], got 5"):
        gpuprim.moe_route(logits, 5)
    with pytest.raises(ValueError, match="gpuprim.moe_route: k must be in"):
        gpuprim.moe_route(logits, 0)
    with pytest.raises(ValueError, match="gpuprim.moe_route: logits must be 2-D"):
        gpuprim.moe_route(logits.reshape(-1), 1)
    with pytest.raises(ValueError, match="gpuprim.moe_route: capacity must be >= 0"):
        gpuprim.moe_route(logits, 2, capacity=-3)
    with pytest.raises(ValueError, match="gpuprim.moe_route: pad_to must be >= 1"):
        gpuprim.moe_route(logits, 2, pad_to=0)


# ---------------------------------------------------------------- moe_route (needs topk_gating)
@needs_topk_gating
@pytest.mark.parametrize("logit_dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", [c for c in METADATA_CASES if c[1] > 0][:12], ids=lambda c: c[0])
def test_moe_route_matches_reference(case, logit_dtype, device):
    name, tokens, experts, k, capacity, pad_to, drop, kind = case
    logits = make_logits(tokens, experts, kind, dtype=logit_dtype).to(device)
    routing = gpuprim.moe_route(logits, k, capacity=capacity, pad_to=pad_to, drop=drop)
    ref_ids, ref_gates = reference_gating(logits.cpu(), k)
    assert torch.equal(routing.expert_ids.cpu(), ref_ids), name
    torch.testing.assert_close(routing.gates.cpu(), ref_gates, rtol=1e-5, atol=1e-6)
    assert_metadata_equal(routing[2:], reference_metadata(ref_ids, routing.gates, experts, capacity, pad_to, drop),
                          name)


@needs_topk_gating
def test_moe_route_gradients_reach_logits(device):
    """d loss / d logits through topk_gating's fp32 gates matches the same chain in pure PyTorch."""
    logits = make_logits(10, 6, "randn", seed=9).to(device).requires_grad_()
    hidden = torch.randn(10, 4, device=device, requires_grad=True)
    routing = gpuprim.moe_route(logits, 2, capacity=3, pad_to=2)
    out = gpuprim.moe_unpermute(torch.tanh(gpuprim.moe_permute(hidden, routing)), routing, routing.gates)
    out.square().sum().backward()
    ref_logits = logits.detach().cpu().requires_grad_()
    ref_hidden = hidden.detach().cpu().requires_grad_()
    _, gates = reference_gating(ref_logits, 2)
    slots = routing.slots.cpu()
    valid = (slots >= 0).unsqueeze(-1)
    token_of = ref_hidden[torch.arange(10).repeat_interleave(2).reshape(10, 2)]
    ref = (torch.where(valid, torch.tanh(token_of), 0.0) * gates.unsqueeze(-1)).sum(1)
    ref.square().sum().backward()
    torch.testing.assert_close(logits.grad.cpu(), ref_logits.grad, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(hidden.grad.cpu(), ref_hidden.grad, rtol=1e-4, atol=1e-6)


ROUTE_OP_CASES = [  # (tokens, experts, k, score, renormalize, capacity, pad_to, drop)
    (7, 4, 2, "softmax", True, None, 1, "position"),
    (7, 4, 2, "softmax", True, 2, 4, "score"),
    (9, 6, 3, "sigmoid", False, 3, 2, "position"),
    (0, 5, 2, "softmax", True, None, 8, "position"),
]


def route_op_args(case, device, requires_grad=False, dtype=torch.float32):
    tokens, experts, k, score, renormalize, capacity, pad_to, drop = case
    logits = make_logits(tokens, experts, "randn", seed=12, dtype=dtype).to(device).requires_grad_(requires_grad)
    return logits, k, score, renormalize, capacity, pad_to, drop


@needs_topk_gating
@pytest.mark.parametrize("case", ROUTE_OP_CASES, ids=lambda c: "T{}E{}k{}{}{}c{}p{}{}".format(*c))
def test_moe_route_op_is_topk_gating_then_metadata(case, device):
    """torch.ops.gpuprim.moe_route returns topk_gating's (gates, expert_ids), then the metadata of them."""
    logits, k, score, renormalize, capacity, pad_to, drop = route_op_args(case, device)
    out = torch.ops.gpuprim.moe_route.default(logits, k, score, renormalize, capacity, pad_to, drop)
    assert isinstance(out, tuple) and len(out) == 7
    gates, expert_ids = torch.ops.gpuprim.topk_gating.default(logits, k, score, renormalize)
    meta = torch.ops.gpuprim.moe_route_metadata.default(expert_ids, gates, logits.size(1), capacity, pad_to, drop)
    for name, a, b in zip(("gates", "expert_ids") + gpuprim.Routing._fields[2:], out, (gates, expert_ids) + meta):
        assert_bitwise_equal(a, b, name)
    routing = gpuprim.moe_route(logits, k, score=score, renormalize=renormalize, capacity=capacity, pad_to=pad_to,
                                drop=drop)
    assert isinstance(routing, gpuprim.Routing)
    for name, a, b in zip(gpuprim.Routing._fields, routing, (out[1], out[0]) + out[2:]):
        assert_bitwise_equal(a, b, name)


@needs_topk_gating
def test_moe_route_op_gradient_reaches_logits(device):
    """Through the registered op (not only the wrapper): the gates' gradient is topk_gating's backward."""
    logits, k, score, renormalize, capacity, pad_to, drop = route_op_args(ROUTE_OP_CASES[1], device, True)
    out = torch.ops.gpuprim.moe_route.default(logits, k, score, renormalize, capacity, pad_to, drop)
    assert out[0].requires_grad and not any(t.requires_grad for t in out[1:])
    weights = torch.randn(out[0].shape, device=device)
    (grad,) = torch.autograd.grad((out[0] * weights).sum(), logits)
    ref_logits = logits.detach().clone().requires_grad_()
    gates, _ = torch.ops.gpuprim.topk_gating.default(ref_logits, k, score, renormalize)
    (ref,) = torch.autograd.grad((gates * weights).sum(), ref_logits)
    assert_bitwise_equal(grad, ref, "grad logits")


@needs_topk_gating
def test_moe_route_opcheck(device):
    for case in ROUTE_OP_CASES:
        for requires_grad in (False, True):
            run_opcheck(torch.ops.gpuprim.moe_route.default, route_op_args(case, device, requires_grad))
    run_opcheck(torch.ops.gpuprim.moe_route.default, route_op_args(ROUTE_OP_CASES[1], device, True, torch.bfloat16))


def routed_step(logits, hidden):
    """moe_route + permute + unpermute under torch.compile: the routing a compiled MoE layer runs."""
    routing = gpuprim.moe_route(logits, 2, capacity=5, pad_to=4, drop="score")
    out = gpuprim.moe_unpermute(torch.tanh(gpuprim.moe_permute(hidden, routing)), routing, routing.gates)
    return out, routing.token_ids, routing.num_dropped


@needs_topk_gating
@pytest.mark.parametrize("dynamic", [False, True])
def test_moe_route_compiles_fullgraph(device, dynamic):
    logits = make_logits(24, 8, "randn", seed=13).to(device)
    hidden = torch.randn(24, 16, device=device)
    check_compiles(routed_step, logits, hidden, dynamic=dynamic)


@needs_topk_gating
def test_moe_route_compiled_backward(device):
    logits = make_logits(24, 8, "randn", seed=14).to(device).requires_grad_()
    hidden = torch.randn(24, 16, device=device)

    def step(x, h):
        return routed_step(x, h)[0].square().sum()

    check_compiled_backward(step, logits, hidden)


@needs_topk_gating
def test_moe_route_errors_come_from_the_op():
    """The checks live in C++: the wrapper and the op raise the same errors (k >= 1: a token goes somewhere)."""
    logits = make_logits(6, 4, "randn")
    op = torch.ops.gpuprim.moe_route.default
    for k in (0, 5, -1):
        message = rf"gpuprim.moe_route: k must be in \[1, num_experts = 4\], got {k}$"
        with pytest.raises(ValueError, match=message):
            gpuprim.moe_route(logits, k)
        with pytest.raises(ValueError, match=message):
            op(logits, k)
    with pytest.raises(ValueError, match="gpuprim.moe_route: drop must be 'position' or 'score', got 'random'"):
        gpuprim.moe_route(logits, 2, capacity=3, drop="random")
    with pytest.raises(ValueError, match="gpuprim.moe_route: capacity must be >= 0 or None, got -3"):
        op(logits, 2, "softmax", True, -3)
    with pytest.raises(ValueError, match="gpuprim.moe_route: pad_to must be >= 1, got 0"):
        op(logits, 2, "softmax", True, None, 0)
    with pytest.raises(ValueError, match="gpuprim.moe_route: logits must be 2-D \\[tokens, num_experts\\], got 3-D"):
        gpuprim.moe_route(logits.reshape(2, 3, 4), 2)
    # The arguments moe_route passes on to topk_gating are checked under moe_route's name.
    with pytest.raises(ValueError, match="gpuprim.moe_route: score must be"):
        gpuprim.moe_route(logits, 2, score="relu")
    with pytest.raises(TypeError, match="gpuprim.moe_route: logits must be float32, float16 or bfloat16"):
        gpuprim.moe_route(logits.double(), 2)


# ---------------------------------------------------------------- example
def test_moe_layer_example_cpu():
    if not HAS_TOPK_GATING:
        pytest.skip("examples/moe_layer.py routes with gpuprim.moe_route, which needs topk_gating")
    output = run_example("moe_layer.py", "--device", "cpu", "--steps", "2", "--tokens", "128", timeout=120)
    assert "matches the reference" in output


def run_hf_moe_drop_in(device: str, tokens: int) -> str:
    """examples/hf_moe_drop_in.py on `device`: HF's Mixtral / Qwen3-MoE / DeepSeek-V3 blocks with gpuprim's routing
    against the blocks' own forward; every block this transformers has must match, none may fail or be skipped
    for a layout the script does not know. Returns the script's output."""
    pytest.importorskip("transformers", reason="examples/hf_moe_drop_in.py compares with HF transformers' blocks")
    if not HAS_TOPK_GATING:
        pytest.skip("examples/hf_moe_drop_in.py routes with gpuprim.moe_route, which needs topk_gating")
    output = run_example("hf_moe_drop_in.py", "--device", device, "--tokens", str(tokens))
    blocks = ("mixtral", "qwen3_moe", "deepseek_v3")
    absent = [b for b in blocks if f"{b}: skipped, this transformers has no such block" in output]
    lines = output.splitlines()
    matched = [b for b in blocks if any(f"{b}: output and" in line and "gradients match" in line for line in lines)]
    assert sorted(matched + absent) == sorted(blocks), output
    assert matched, "no HF MoE block in this transformers to compare with:\n" + output
    return output


def test_hf_moe_drop_in_example_cpu():
    run_hf_moe_drop_in("cpu", 64)


@pytest.mark.gpu
def test_hf_moe_drop_in_example_cuda():
    output = run_hf_moe_drop_in("cuda", 1024)
    assert "forward+backward" in output  # the CUDA run also times both versions


# ---------------------------------------------------------------- CUDA only
@pytest.mark.gpu
@pytest.mark.parametrize("case", METADATA_CASES + LARGE_METADATA_CASES,
                         ids=[c[0] for c in METADATA_CASES + LARGE_METADATA_CASES])
def test_cuda_metadata_matches_cpu(case):
    expert_ids, gates, experts, capacity, pad_to, drop = metadata_case(case, "cpu")
    cpu = gpuprim.moe_route_metadata(expert_ids, gates, experts, capacity, pad_to, drop)
    cuda = gpuprim.moe_route_metadata(expert_ids.cuda(), gates.cuda(), experts, capacity, pad_to, drop)
    assert_metadata_equal(cuda, cpu, case[0])


@pytest.mark.gpu
@pytest.mark.parametrize("tokens", [3000, 1000])  # unpermute: a warp per token / a thread per pack
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_cuda_permute_unpermute_bitwise_equal_cpu(dtype, tokens):
    expert_ids, gates = reference_gating(make_logits(tokens, 64, "randn", seed=10), 8)
    cpu = routing_for(expert_ids, gates, 64, pad_to=128)
    cuda = routing_for(expert_ids.cuda(), gates.cuda(), 64, pad_to=128)
    hidden = torch.randn(tokens, 264).to(dtype)
    assert_bitwise_equal(gpuprim.moe_permute(hidden.cuda(), cuda).cpu(), gpuprim.moe_permute(hidden, cpu))
    expert_out = torch.randn(cpu.token_ids.size(0), 264).to(dtype)
    assert_bitwise_equal(gpuprim.moe_unpermute(expert_out.cuda(), cuda, cuda.gates).cpu(),
                         gpuprim.moe_unpermute(expert_out, cpu, cpu.gates))
    grad = torch.randn(tokens, 264).to(dtype)
    gc, gg = torch.ops.gpuprim.moe_unpermute_backward(grad.cuda(), expert_out.cuda(), cuda.slots, cuda.gates, True)
    rc, rg = torch.ops.gpuprim.moe_unpermute_backward(grad, expert_out, cpu.slots, cpu.gates, True)
    assert_bitwise_equal(gc.cpu(), rc)
    torch.testing.assert_close(gg.cpu(), rg, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
def test_cuda_no_sync_and_graph_capture():
    expert_ids, gates = reference_gating(make_logits(4096, 64, "randn", seed=11), 8)
    expert_ids, gates = expert_ids.cuda(), gates.cuda().requires_grad_()
    hidden = torch.randn(4096, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    # torch.autograd.grad, not .backward(): accumulating into the leaves' .grad runs on the stream the
    # leaves were made on (the legacy default stream), which CUDA graph capture forbids.
    def run(capacity, drop):
        routing = routing_for(expert_ids, gates, 64, capacity, 16, drop)
        permuted = gpuprim.moe_permute(hidden, routing)
        out = gpuprim.moe_unpermute(permuted * 2, routing, gates)
        grad_hidden, grad_gates = torch.autograd.grad(out.float().square().sum(), [hidden, gates])
        # Detached: outputs that keep the graph alive would keep the leaves' AccumulateGrad nodes, made on the
        # eager call's (legacy default) stream, into the captured backward.
        return tuple(routing[2:]) + (permuted.detach(), out.detach(), grad_hidden, grad_gates)

    check_no_sync_and_graph_capture(lambda: run(None, "position"))
    check_no_sync_and_graph_capture(lambda: run(480, "score"))  # ~512 pairs per expert: drops


@pytest.mark.gpu
@needs_topk_gating
def test_cuda_moe_route_no_sync_and_graph_capture():
    logits = torch.randn(2048, 128, device="cuda", requires_grad=True)
    hidden = torch.randn(2048, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def run():  # autograd.grad: see test_cuda_no_sync_and_graph_capture
        routing = gpuprim.moe_route(logits, 8, capacity=200, pad_to=128, drop="score")
        out = gpuprim.moe_unpermute(gpuprim.moe_permute(hidden, routing), routing, routing.gates)
        grad_logits, grad_hidden = torch.autograd.grad(out.float().sum(), [logits, hidden])
        return tuple(t.detach() for t in routing) + (out.detach(), grad_logits, grad_hidden)

    check_no_sync_and_graph_capture(run)


@pytest.mark.gpu
def test_cuda_beyond_int32_elements():
    """T*k*H > 2^31 elements in the permuted buffer: 64-bit row offsets (~9 GB of bf16)."""
    tokens, experts, k, hidden_size = 65536, 64, 8, 4160
    expert_ids = torch.randint(0, experts, (tokens, experts), device="cuda").argsort(1)[:, :k]
    gates = torch.rand(tokens, k, device="cuda")
    routing = routing_for(expert_ids, gates, experts)
    assert routing.token_ids.numel() * hidden_size > 2**31
    hidden = torch.randn(tokens, hidden_size, device="cuda", dtype=torch.bfloat16)
    permuted = gpuprim.moe_permute(hidden, routing)
    last = routing.token_ids.numel() - 1
    assert torch.equal(permuted[last], hidden[routing.token_ids[last]])
    out = gpuprim.moe_unpermute(permuted, routing)  # sum of k copies of each token
    torch.testing.assert_close(out.float(), hidden.float() * k, rtol=1e-2, atol=1e-2)
    del permuted
    assert bool((routing.counts.sum() == tokens * k).item())


def test_no_grad_fast_path(device):
    expert_ids, gates = reference_gating(make_logits(24, 8, "randn", seed=3), 2)
    routing = routing_for(expert_ids.to(device), gates.to(device), 8, None, 4, "position")
    hidden = torch.randn(24, 16, dtype=torch.float64, device=device)
    check_no_grad_fast_path(lambda h: gpuprim.moe_permute(h, routing), hidden)
    expert_out = gpuprim.moe_permute(hidden, routing)
    check_no_grad_fast_path(lambda e: gpuprim.moe_unpermute(e, routing, gates.to(device, torch.float64)), expert_out)
