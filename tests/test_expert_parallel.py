"""gpuprim.distributed.dispatch / combine: multi-process gloo on CPU (2 and 4 ranks spawned here), and a process
group of size 1 on NCCL (marked gpu) with CUDA-graph capture and sync-debug mode.

Each world size spawns its ranks once; every rank runs all cases of expert_parallel_cases.py and writes what
failed, so each case is its own test below at the cost of one spawn per world size. gloo implements
all_to_all_single for CPU tensors (uneven split sizes, empty splits, bf16 and int64 included), so the CPU runs take
the same code path as NCCL on GPUs. Most of a run is starting the processes (importing torch); the cases take
well under a second per rank.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from expert_parallel_cases import CASES, CHECKS, Case, make_inputs, run_experts, worker

import gpuprim
from gpuprim.distributed import combine, dispatch
from op_checks import check_no_sync_and_graph_capture


def spawn_world(world: int, backend: str = "gloo") -> list:
    with tempfile.TemporaryDirectory() as out_dir:
        init_file = os.path.join(out_dir, "init")
        mp.spawn(worker, args=(world, init_file, out_dir, backend), nprocs=world, join=True)
        results = []
        for rank in range(world):
            with open(os.path.join(out_dir, f"rank{rank}.json")) as f:
                results.append(json.load(f))
    return results


@pytest.fixture(scope="module", params=[2, 4], ids=lambda w: f"world{w}")
def gloo_results(request):
    return spawn_world(request.param)


@pytest.mark.parametrize("name", list(CHECKS))
def test_gloo(gloo_results, name):
    failures = [f"rank {rank}:\n{result.get(name, 'not run')}" for rank, result in enumerate(gloo_results)
                if result.get(name, "not run")]
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- one GPU, NCCL, process group of size 1
@pytest.fixture(scope="module")
def nccl_group():
    if not torch.cuda.is_available() or not dist.is_nccl_available():
        pytest.skip("needs a CUDA device and NCCL")
    with tempfile.TemporaryDirectory() as tmp:
        torch.cuda.set_device(0)
        dist.init_process_group("nccl", init_method=f"file://{tmp}/init", rank=0, world_size=1,
                                timeout=datetime.timedelta(seconds=60))
        try:
            yield None
        finally:
            dist.destroy_process_group()


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(CHECKS))
def test_nccl_size1(nccl_group, name):
    CHECKS[name](0, 1, torch.device("cuda", 0))


def _layer(case: Case, device: str):
    hidden, logits, _, weights = make_inputs(case, 1)
    h, lg, w = hidden[0].to(device), logits[0].to(device), weights.to(device)

    def step():
        routing = gpuprim.moe_route(lg, case.k, capacity=case.capacity)
        x, handle = dispatch(h, routing, num_local_experts=case.local_experts, capacity=case.capacity,
                             pad_to=case.pad_to)
        return x, combine(run_experts(x, handle.offsets[1:], w), handle, routing.gates)

    return step


@pytest.mark.gpu
def test_nccl_fixed_capacity_graph_capture_no_sync(nccl_group):
    # Sync-debug "error" around one call, then CUDA-graph capture and replay, equal to the eager call.
    check_no_sync_and_graph_capture(_layer(Case([64], k=2, capacity=24, pad_to=8, local_experts=4), "cuda"),
                                    replays=2)


@pytest.mark.gpu
def test_nccl_dropless_one_sync(nccl_group, monkeypatch):
    # The one wait of a dropless dispatch is on a CUDA event behind the split sizes' copy (so the send buffer's
    # gather runs meanwhile); sync-debug mode does not see event waits, so they are counted here, and sync-debug
    # "error" shows there is no other.
    step = _layer(Case([64], k=2, pad_to=8, local_experts=4), "cuda")
    eager = step()  # the first call per group also checks combine's arguments across ranks
    torch.cuda.synchronize()
    waits = []
    original = torch.cuda.Event.synchronize
    monkeypatch.setattr(torch.cuda.Event, "synchronize", lambda self: (waits.append(1), original(self))[1])
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        again = step()
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    assert len(waits) == 1
    for a, b in zip(eager, again):
        assert torch.equal(a, b)


@pytest.mark.gpu
def test_nccl_dropless_refuses_graph_capture(nccl_group):
    h = torch.randn(16, 8, device="cuda")
    routing = gpuprim.moe_route(torch.randn(16, 4, device="cuda"), 2)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="pass a capacity"):
        with torch.cuda.graph(graph):
            dispatch(h, routing, num_local_experts=4)


def test_cases_cover_the_required_situations():
    # capacity drops, experts with zero tokens, a rank with zero tokens, uneven T, k = 1 and k = 8
    assert any(c.capacity is not None and c.peaked for c in CASES.values())
    assert any(0 in c.tokens for c in CASES.values())
    assert {1, 8} <= {c.k for c in CASES.values()}


# ---------------------------------------------------------------- the receive-side layout, without processes
@pytest.mark.parametrize("block", [None, 5])
@pytest.mark.parametrize("pad_to", [1, 4])
def test_receive_layout(block, pad_to):
    from gpuprim.distributed._dispatch import receive_layout

    gen = torch.Generator().manual_seed(0)
    world, local = 3, 4
    recv_counts = torch.randint(0, 6, (world, local), generator=gen)
    recv_counts[1] = 0  # a source rank that sends nothing
    recv_counts[:, 2] = 0  # a local expert nobody routes to
    segment_rows = [block if block is not None else int(c) for c in recv_counts.reshape(-1)]
    received = sum(segment_rows)
    per_expert = recv_counts.sum(0).tolist()
    out_rows = sum(-(-n // pad_to) * pad_to for n in per_expert) + 7  # spare rows at the end stay padding
    slots, token_ids, offsets, counts = receive_layout(recv_counts, block, received, out_rows, pad_to)
    # Reference: walk the received rows, fill each expert's block source rank by source rank.
    expected_slots = [-1] * received
    expected_ids = [-1] * out_rows
    starts = [0]
    for n in per_expert:
        starts.append(starts[-1] + -(-n // pad_to) * pad_to)
    cursor = starts[:-1]
    row = 0
    for w in range(world):
        for e in range(local):
            for c in range(segment_rows[w * local + e]):
                if c < recv_counts[w, e]:
                    expected_slots[row] = cursor[e]
                    expected_ids[cursor[e]] = row
                    cursor[e] += 1
                row += 1
    assert slots.reshape(-1).tolist() == expected_slots
    assert token_ids.tolist() == expected_ids
    assert offsets.tolist() == starts
    assert counts.tolist() == per_expert


def test_example_under_torchrun():
    """examples/moe_expert_parallel.py: 2 gloo ranks, the loss curve equal to the single-process block's."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "torch_ops"), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               str(root / "examples" / "moe_expert_parallel.py"), "--steps", "2"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches the single-process loss curve" in result.stdout
