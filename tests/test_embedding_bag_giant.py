"""gpuprim.embedding_bag's forward with long bags (more than LONG positions: the CUDA kernels split them across
blocks at fixed windows and fold the pieces in window order) against the CPU kernel (the reference): every
mode, dtype, per_sample_weights, padding_idx and include_last_offset; giant bags, a bag holding the whole input,
empty bags around a giant one, bags just over and under the threshold, NaN and ties for max, bad indices."""
import itertools

import pytest
import torch

import gpuprim
from op_checks import assert_bitwise_equal, assert_deterministic

LONG = 1024  # kEmbeddingBagLongBag: bags of more positions take the split path on CUDA
NUM_EMBEDDINGS, DIM = 300, 24
MODES = ("sum", "mean", "max")
DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _layout(name, g):
    """Bag lengths of a named layout (a list; 0 = an empty bag)."""
    if name == "one_giant":  # one giant bag among bags of 20
        return [20] * 150 + [5000] + [20] * 150
    if name == "whole":  # one bag holding the whole input
        return [7000]
    if name == "empties_around":  # many empty bags before, between and after long ones
        return [0] * 100 + [6000] + [0] * 100 + [3, 1500] + [0] * 50
    if name == "threshold":  # just under and over the threshold, unaligned starts, two long bags in one window
        return [7, LONG, LONG + 1, 3, 2 * LONG, 2 * LONG + 1, LONG - 1, 1, 1300, 1300, 0, 2500, 5]
    if name == "many_long":  # random long and short bags
        return [int(x) for x in torch.randint(0, 3000, (12,), generator=g)]
    raise ValueError(name)


LAYOUTS = ("one_giant", "whole", "empties_around", "threshold", "many_long")


def _inputs(layout, dtype, *, exact=False, psw=False, last=False, index_dtype=torch.int64, seed=0, dim=DIM):
    """(weight, indices, offsets, per_sample_weights) on the CPU. exact: small integer weights, so that fp32 sums
    are exact (bitwise comparable whatever the order) and max sees many ties."""
    g = torch.Generator().manual_seed(seed)
    lengths = _layout(layout, g)
    n = sum(lengths)
    # Zipf-like indices: a few hot rows (duplicates within a bag, ties of max between equal rows).
    idx = (torch.rand(n, generator=g) ** 3 * NUM_EMBEDDINGS).long().to(index_dtype)
    offsets = torch.tensor([0] + list(itertools.accumulate(lengths)), dtype=index_dtype)
    offsets = offsets if last else offsets[:-1]
    if exact:
        weight = torch.randint(-3, 4, (NUM_EMBEDDINGS, dim), generator=g).to(dtype)
    else:
        weight = torch.randn(NUM_EMBEDDINGS, dim, generator=g, dtype=torch.float64).to(dtype)
    weights = torch.randn(n, generator=g, dtype=torch.float64).to(dtype) if psw else None
    return weight, idx, offsets, weights


def _run(args, mode, padding, last):
    weight, idx, offsets, psw = args
    return torch.ops.gpuprim.embedding_bag(weight, idx, offsets, mode, psw, padding, last, False)


def _cuda(args):
    return [None if t is None else t.cuda() for t in args]


def _options():
    """(mode, padding_idx, include_last_offset, psw)."""
    for mode, padding, last, psw in itertools.product(MODES, (None, 0), (False, True), (False, True)):
        if psw and mode != "sum":
            continue
        yield mode, padding, last, psw


# ---------------------------------------------------------------- CPU (here: the reference against torch)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cpu_reference_matches_torch(layout):
    for mode, padding, last, use_psw in _options():
        weight, idx, offsets, psw = _inputs(layout, torch.float64, psw=use_psw, last=last)
        out, bag_size, max_indices = _run((weight, idx, offsets, psw), mode, padding, last)
        ref = torch.nn.functional.embedding_bag(idx, weight, offsets, mode=mode, per_sample_weights=psw,
                                                padding_idx=padding, include_last_offset=last)
        torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
        bounds = offsets.tolist() + ([] if last else [idx.numel()])
        used = [int(((idx[a:b] != padding) if padding is not None else torch.ones(b - a, dtype=torch.bool)).sum())
                for a, b in zip(bounds[:-1], bounds[1:])]
        assert bag_size.tolist() == used


# ---------------------------------------------------------------- CUDA against the CPU kernel
@pytest.mark.gpu
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_exact_weights_bitwise(layout, dtype):
    """Integer weights: sums are exact in fp32 (any order), so every output is bitwise the CPU kernel's;
    max sees many ties (the first maximum wins)."""
    for mode, padding, last, use_psw in _options():
        if use_psw:
            continue  # random weights make sums inexact: test_cuda_random_weights_close
        for index_dtype in (torch.int32, torch.int64):
            args = _inputs(layout, dtype, exact=True, last=last, index_dtype=index_dtype)
            cpu = _run(args, mode, padding, last)
            cuda = _run(_cuda(args), mode, padding, last)
            what = f"{layout} {dtype} {mode} padding={padding} last={last} {index_dtype}"
            for name, a, b in zip(("out", "bag_size", "max_indices"), cuda, cpu):
                assert_bitwise_equal(a.cpu(), b, f"{what} {name}")


@pytest.mark.gpu
def test_cuda_long_bags_after_ordinary_batches():
    """The long-bag kernel runs only when this call's bag kernel met a long bag (a per-call token in workspace
    memory): batches with and without long bags, alternating and reusing freed workspace, stay exact."""
    plain = ([20] * 300, False)
    for lengths, long_bags in (plain, ([20] * 150 + [5000] + [20] * 150, True), plain, plain, ([3000], True), plain):
        g = torch.Generator().manual_seed(len(lengths))
        n = sum(lengths)
        idx = torch.randint(0, NUM_EMBEDDINGS, (n,), generator=g)
        offsets = torch.tensor([0] + list(itertools.accumulate(lengths))[:-1])
        weight = torch.randint(-3, 4, (NUM_EMBEDDINGS, DIM), generator=g).float()  # exact sums
        assert long_bags == (max(lengths) > LONG)
        for mode in MODES:
            cpu = _run((weight, idx, offsets, None), mode, None, False)
            cuda = _run(_cuda((weight, idx, offsets, None)), mode, None, False)
            for name, a, b in zip(("out", "bag_size", "max_indices"), cuda, cpu):
                assert_bitwise_equal(a.cpu(), b, f"{len(lengths)} bags {mode} {name}")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_random_weights_close(layout, dtype):
    """Random weights (and per_sample_weights): within the existing CUDA-vs-float64 tolerance; max bitwise."""
    tol = {torch.float32: 1e-4, torch.bfloat16: 2e-2, torch.float16: 1e-2}[dtype]
    for mode, padding, last, use_psw in _options():
        args = _inputs(layout, dtype, psw=use_psw, last=last, seed=1)
        cuda = _run(_cuda(args), mode, padding, last)
        ref_args = (args[0].double(), args[1], args[2], None if args[3] is None else args[3].double())
        ref = _run(ref_args, mode, padding, last)
        what = f"{layout} {dtype} {mode} padding={padding} last={last} psw={use_psw}"
        if mode == "max":
            cpu = _run(args, mode, padding, last)
            for name, a, b in zip(("out", "bag_size", "max_indices"), cuda, cpu):
                assert_bitwise_equal(a.cpu(), b, f"{what} {name}")
            continue
        scale = ref[0].abs().max().item() + 1
        torch.testing.assert_close(cuda[0].cpu().double(), ref[0], rtol=tol, atol=tol * scale, msg=what)
        assert torch.equal(cuda[1].cpu(), ref[1]), what


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16))
def test_cuda_long_bags_bitwise_reproducible(mode, dtype):
    """Run to run the same bits, random weights (order-sensitive sums), wide and narrow rows."""
    for layout, dim in itertools.product(("one_giant", "whole", "many_long"), (DIM, 128, 5)):
        args = _cuda(_inputs(layout, dtype, psw=mode == "sum", seed=2, dim=dim))
        assert_deterministic(lambda: _run(args, mode, None, False), runs=4)  # noqa: B023


@pytest.mark.gpu
def test_cuda_long_bags_wide_and_narrow_rows():
    """Rows of 1, 5 (no 16-byte loads), 128 and 1000 (several column tiles) columns, fp64 included."""
    for dim, dtype, mode in itertools.product((1, 5, 128, 1000), (torch.float32, torch.float64), MODES):
        args = _inputs("threshold", dtype, exact=True, dim=dim, seed=3)
        cpu = _run(args, mode, None, False)
        cuda = _run(_cuda(args), mode, None, False)
        for name, a, b in zip(("out", "bag_size", "max_indices"), cuda, cpu):
            assert_bitwise_equal(a.cpu(), b, f"dim={dim} {dtype} {mode} {name}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_long_bag_max_nan_rule(dtype):
    """max takes the first used row as it is (a NaN there stays) and never takes a later NaN: the pieces of a
    long bag keep that rule wherever the NaN falls (first row of the bag, of a window, inside a piece)."""
    weight, idx, offsets, _ = _inputs("threshold", dtype, exact=True, seed=4)
    weight[7, :3] = float("nan")
    weight[11, 2:6] = float("nan")
    starts = offsets.tolist()
    for p in starts[2:6] + [LONG, 2 * LONG, 3 * LONG + 5]:  # first rows of long bags, window starts, inside
        idx[p] = 7 if p % 2 == 0 else 11
    args = (weight, idx, offsets, None)
    for padding in (None, 7):
        cpu = _run(args, "max", padding, False)
        cuda = _run(_cuda(args), "max", padding, False)
        for name, a, b in zip(("out", "bag_size", "max_indices"), cuda, cpu):
            assert_bitwise_equal(a.cpu(), b, f"padding={padding} {name}", nan_payload=False)


@pytest.mark.gpu
def test_cuda_long_bag_records_bad_index():
    """An out-of-range index inside a long bag is skipped (like padding_idx) and recorded, as in a short bag."""
    weight, idx, offsets, _ = _inputs("one_giant", torch.float32)
    position = 150 * 20 + 3000  # inside the giant bag
    bad = idx.clone()
    bad[position] = NUM_EMBEDDINGS + 5
    # Reference: the bad entry replaced by an appended padding row.
    padded = torch.cat([weight, torch.zeros(1, DIM)])
    ref_idx = bad.clone()
    ref_idx[position] = NUM_EMBEDDINGS
    for mode in MODES:
        cuda = _run(_cuda((weight, bad, offsets, None)), mode, None, False)
        with pytest.raises(gpuprim.InputError, match=rf"indices\[{position}\] = {NUM_EMBEDDINGS + 5} is out of range"):
            gpuprim.check_errors()
        ref = _run((padded, ref_idx, offsets, None), mode, NUM_EMBEDDINGS, False)
        torch.testing.assert_close(cuda[0].cpu(), ref[0], rtol=1e-4, atol=1e-3)
        assert torch.equal(cuda[1].cpu(), ref[1]) and int(cuda[1][150]) == 4999
        if mode == "max":
            assert torch.equal(cuda[2].cpu(), ref[2])


@pytest.mark.gpu
def test_cuda_giant_bag_no_sync_and_graph_capture():
    from op_checks import check_no_sync_and_graph_capture

    args = _cuda(_inputs("one_giant", torch.float32, psw=True))
    check_no_sync_and_graph_capture(lambda: _run(args, "sum", 0, False))
    check_no_sync_and_graph_capture(lambda: _run(args[:3] + [None], "max", None, False))
