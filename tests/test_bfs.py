"""gpuprim.bfs against a pure-PyTorch level-synchronous BFS, parents checked by the Graph500 rules."""
import pytest
import torch
from graphs import bfs_reference, coo_to_csr, csr_from_lengths, kronecker_graph, validate_bfs

import gpuprim
from op_checks import assert_deterministic, check_compiles, check_no_sync_and_graph_capture, run_opcheck
from samples import INDEX_DTYPES

DIRECTIONS = ("auto", "top_down", "bottom_up")


def make_graphs(index_dtype=torch.int64):
    """(name, crow, col, sources, symmetric): Kronecker (undirected), a directed random graph, a path (a long
    diameter), disconnected pieces, isolated vertices, self loops and repeated edges, an empty graph."""
    g = torch.Generator().manual_seed(5)
    graphs = []
    crow, col = kronecker_graph(10, 16, seed=3, index_dtype=index_dtype)
    graphs.append(("kronecker10", crow, col, [int(torch.argmax(crow[1:] - crow[:-1]))], True))
    graphs.append(("kronecker10_multi", crow, col, [0, 5, 77, 5], True))
    crow, col = csr_from_lengths(torch.randint(0, 4, (300,), generator=g), 300, g, index_dtype)
    graphs.append(("directed", crow, col, [0], False))
    n = 100
    path = coo_to_csr(torch.arange(n - 1), torch.arange(1, n), n, index_dtype)
    graphs.append(("path", *path, [0], False))
    pieces = coo_to_csr(torch.tensor([0, 1, 2, 3, 5, 5, 6]), torch.tensor([1, 0, 3, 2, 5, 6, 6]), 8, index_dtype)
    graphs.append(("pieces_loops", *pieces, [0, 5], False))
    graphs.append(("isolated", torch.zeros(6, dtype=index_dtype), torch.zeros(0, dtype=index_dtype), [3], True))
    graphs.append(("no_sources", *path, [], False))
    return graphs


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_matches_reference_and_graph500_rules(device, direction, index_dtype):
    for name, crow, col, sources, symmetric in make_graphs(index_dtype):
        # The reference and the Graph500 check run on the CPU graph: their many small launches would dominate
        # the test under compute-sanitizer.
        expected_dist, expected_parent = bfs_reference(crow, col, sources)
        for deterministic in (True, False):
            with gpuprim.deterministic(deterministic):
                dist, parent = gpuprim.bfs(crow.to(device), col.to(device), sources, direction=direction,
                                           symmetric=symmetric)
            validate_bfs(crow, col, sources, dist.cpu(), parent.cpu(), expected_dist)
            if deterministic:
                assert torch.equal(parent.cpu(), expected_parent), f"{name}: parents are not the smallest"


@pytest.mark.parametrize("max_depth", [0, 1, 3, 1000])
def test_max_depth(device, max_depth):
    crow, col = kronecker_graph(9, 8, seed=2)
    crow, col = crow.to(device), col.to(device)
    dist, parent = gpuprim.bfs(crow, col, 1, max_depth=max_depth, symmetric=True)
    expected_dist, _ = bfs_reference(crow, col, [1], max_depth=max_depth)
    validate_bfs(crow, col, [1], dist, parent, expected_dist)


def test_source_forms_agree(device):
    crow, col = kronecker_graph(8, 8, seed=4)
    crow, col = crow.to(device), col.to(device)
    with gpuprim.deterministic(True):
        a = gpuprim.bfs(crow, col, 7)
        b = gpuprim.bfs(crow, col, [7])
        c = gpuprim.bfs(crow, col, torch.tensor([7], device=device, dtype=torch.int32))
    for x, y in ((a, b), (a, c)):
        assert torch.equal(x[0], y[0]) and torch.equal(x[1], y[1])


def test_bad_input_raises_on_cpu():
    crow, col = torch.tensor([0, 1, 2]), torch.tensor([1, 0])
    with pytest.raises(IndexError, match=r"gpuprim.bfs: sources\[0\] = 5 is out of range"):
        gpuprim.bfs(crow, col, 5)
    with pytest.raises(IndexError, match=r"gpuprim.bfs: col\[1\] = 7 is out of range"):
        gpuprim.bfs(crow, torch.tensor([1, 7]), 0)
    with pytest.raises(ValueError, match=r"gpuprim.bfs: crow\[2\] = 1 is less than"):
        gpuprim.bfs(torch.tensor([0, 2, 1]), col, 0)
    with pytest.raises(ValueError, match="direction must be one of"):
        gpuprim.bfs(crow, col, 0, direction="sideways")
    with pytest.raises(ValueError, match="max_depth must be >= 0"):
        gpuprim.bfs(crow, col, 0, max_depth=-1)


@pytest.mark.gpu
def test_bad_input_on_cuda_is_recorded():
    crow, col = torch.tensor([0, 1, 2], device="cuda"), torch.tensor([1, 0], device="cuda")
    gpuprim.bfs(crow, col, torch.tensor([9], device="cuda"))
    with pytest.raises(gpuprim.InputError, match=r"gpuprim.bfs: sources\[0\] = 9 is out of range"):
        gpuprim.check_errors()


@pytest.mark.gpu
def test_offsets_out_of_order_with_hubs_stay_in_bounds():
    # Every other vertex claims all edges: more high-degree vertices than the edges allow for the work lists.
    edges, pairs = 4096, 256
    crow = torch.tensor([0] + [edges, 0] * pairs + [edges], device="cuda")
    col = torch.randint(0, 2 * pairs + 1, (edges,), device="cuda")
    gpuprim.bfs(crow, col, 0)
    with pytest.raises(gpuprim.InputError, match=r"gpuprim.bfs: crow\[\d+\]"):
        gpuprim.check_errors()
    dist, _ = gpuprim.bfs(torch.tensor([0, 1, 2], device="cuda"), torch.tensor([1, 0], device="cuda"), 0)
    assert dist.tolist() == [0, 1]


def test_deterministic(device):
    crow, col = kronecker_graph(10, 16, seed=6)
    crow, col = crow.to(device), col.to(device)
    with gpuprim.deterministic(True):
        for direction in DIRECTIONS:
            assert_deterministic(lambda: gpuprim.bfs(crow, col, [3, 9], direction=direction, symmetric=True))


@pytest.mark.gpu
def test_cuda_equals_cpu_kronecker_large():
    crow, col = kronecker_graph(16, 16, seed=7)
    for symmetric in (True, False):
        with gpuprim.deterministic(True):
            cpu = gpuprim.bfs(crow, col, 11, symmetric=symmetric)
            cuda = gpuprim.bfs(crow.cuda(), col.cuda(), 11, symmetric=symmetric)
        assert torch.equal(cpu[0], cuda[0].cpu()) and torch.equal(cpu[1], cuda[1].cpu())
        validate_bfs(crow, col, [11], cuda[0], cuda[1], cpu[0])
    with gpuprim.deterministic(False):
        dist, parent = gpuprim.bfs(crow.cuda(), col.cuda(), 11, symmetric=True)
    validate_bfs(crow, col, [11], dist, parent, cpu[0])


@pytest.mark.gpu
def test_no_sync_with_max_depth_and_graph_capture():
    crow, col = kronecker_graph(10, 8, seed=8, device="cuda")
    sources = torch.zeros(1, dtype=torch.int64, device="cuda")  # made here: a tensor from a list copies and syncs
    with gpuprim.deterministic(True):
        check_no_sync_and_graph_capture(lambda: gpuprim.bfs(crow, col, sources, max_depth=8, symmetric=True),
                                        replays=2)


def test_opcheck(device):
    crow, col = kronecker_graph(6, 4, seed=9)
    crow, col = crow.to(device), col.to(device)
    sources = torch.tensor([0, 3], device=device)
    for direction in DIRECTIONS:
        run_opcheck(torch.ops.gpuprim.bfs.default, (crow, col, sources),
                    {"direction": direction, "symmetric": True, "deterministic": True})
    run_opcheck(torch.ops.gpuprim.bfs.default, (crow, col, sources), {"max_depth": 2, "deterministic": True})


def test_compiles(device):
    crow, col = kronecker_graph(6, 4, seed=10)
    crow, col = crow.to(device), col.to(device)
    sources = torch.tensor([1], device=device)
    with gpuprim.deterministic(True):
        check_compiles(lambda c, k, s: gpuprim.bfs(c, k, s, max_depth=4), crow, col, sources)
