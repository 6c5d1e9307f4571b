"""gpuprim.spmm and gpuprim.csr_transpose against pure-PyTorch references, on CPU and CUDA."""
import pytest
import torch
from graphs import csr_from_lengths, power_law_lengths

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
from samples import FLOAT_DTYPES, INDEX_DTYPES

REDUCTIONS = ("sum", "mean", "max", "min")


# ---------------------------------------------------------------- reference
def reference(crow, col, values, dense, reduce):
    """float64 loop over rows with torch's own reductions; empty rows give 0."""
    crow, col = crow.long().cpu(), col.long().cpu()
    x = dense.detach().double().cpu()
    x2 = x if x.dim() == 2 else x.unsqueeze(1)
    w = None if values is None else values.detach().double().cpu()
    rows = []
    for r in range(crow.numel() - 1):
        lo, hi = int(crow[r]), int(crow[r + 1])
        terms = x2[col[lo:hi]]
        if w is not None:
            terms = terms * w[lo:hi, None]
        if hi == lo:
            rows.append(torch.zeros(x2.size(1), dtype=torch.float64))
        elif reduce in ("sum", "mean"):
            rows.append(terms.sum(0) / (hi - lo if reduce == "mean" else 1))
        else:
            rows.append(terms.amax(0) if reduce == "max" else terms.amin(0))
    out = torch.stack(rows) if rows else torch.zeros(0, x2.size(1), dtype=torch.float64)
    return out if x.dim() == 2 else out.squeeze(1)


def error_bound(crow, col, values, dense, reduce):
    """A sum of m products in any order is within (m + 1) eps_acc sum|v x| (Higham), plus the output rounding."""
    acc = torch.float32 if dense.dtype in (torch.float16, torch.bfloat16) else dense.dtype
    absolute = reference(crow, col, None if values is None else values.abs(), dense.abs(), "sum")
    lengths = (crow[1:] - crow[:-1]).long().cpu().double()
    lengths = lengths if dense.dim() == 1 else lengths[:, None]
    bound = (lengths + 1) * torch.finfo(acc).eps * absolute
    return bound / lengths.clamp(min=1) if reduce == "mean" else bound


def assert_matches_reference(out, crow, col, values, dense, reduce, what=""):
    ref = reference(crow, col, values, dense, reduce)
    assert out.dtype == dense.dtype and out.device == dense.device, what
    assert tuple(out.shape) == tuple(ref.shape), f"{what}: shape {tuple(out.shape)} vs {tuple(ref.shape)}"
    got = out.detach().double().cpu()
    assert torch.equal(torch.isnan(got), torch.isnan(ref)), f"{what}: NaN positions differ"
    if reduce in ("max", "min"):
        expected = ref.to(dense.dtype).double()  # products are rounded in Acc, then to the output dtype
        close = (got - expected).abs() <= torch.finfo(dense.dtype).eps * expected.abs() + 1e-300
        assert bool((close | torch.isnan(ref) | (got == expected)).all()), f"{what}: values differ"
        return
    finite = torch.isfinite(ref)
    info = torch.finfo(dense.dtype)  # the output rounding, subnormal outputs included
    bound = error_bound(crow, col, values, dense, reduce) + info.eps * ref.abs() + info.tiny * info.eps
    err = (got - ref).abs()
    assert bool((err[finite] <= bound[finite]).all()), f"{what}: max err {err[finite].max()}"


# ---------------------------------------------------------------- samples
def make_cases(dtype, index_dtype=torch.int64, device="cpu"):
    """(name, crow, col, values, dense): empty, no nonzeros, empty rows, one giant row cut by many tiles,
    many tiny rows, power-law rows, ragged and GNN feature widths, 1-D dense (SpMV), unweighted."""
    g = torch.Generator().manual_seed(29)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

    def case(name, lengths, cols, features, weighted=True):
        crow, col = csr_from_lengths(lengths, cols, g, index_dtype)
        dense = rand(cols, features) if features else rand(cols)
        values = rand(col.numel()) if weighted else None
        return (name, crow, col, values, dense)

    tiny = torch.randint(0, 4, (700,), generator=g).tolist()
    cases = [
        case("no_rows", [], 5, 3),
        case("no_nonzeros", [0, 0, 0], 4, 3),
        case("no_columns", [0, 0], 0, 2),
        case("one", [1], 1, 1),
        case("empty_ends_middle", [0, 0, 5, 0, 7, 8, 0, 0], 9, 6),
        case("giant_row", [5000], 300, 3),
        case("giant_row_wide", [3000], 200, 40),
        case("giant_between_tiny", [1, 2, 4000, 0, 3], 50, 8),
        case("tiny_rows", tiny, 100, 5),
        case("power_law", power_law_lengths(500, 8.0, g).tolist(), 500, 16),
        case("spmv", [3, 0, 40, 7, 100], 60, 0),
        case("unweighted", [3, 0, 40, 7, 100], 60, 32, weighted=False),
        case("unweighted_spmv", power_law_lengths(300, 5.0, g).tolist(), 300, 0, weighted=False),
    ]
    for f in (1, 2, 3, 4, 5, 32, 33, 128, 130):
        lengths = torch.randint(0, 40, (50,), generator=g).tolist()
        cases.append(case(f"F{f}", lengths, 70, f))
    name, crow, col, values, dense = case("nan_inf", [5, 10, 0, 7], 12, 4)
    dense[3, 0], dense[5, 1], dense[6, 1], dense[7, 2] = float("nan"), float("inf"), float("-inf"), float("inf")
    cases.append((name, crow, col, values, dense))
    name, crow, col, values, dense = case("noncontiguous", [4, 9, 0, 30], 33, 20)
    cases.append((name, crow, col, values, rand(20, 33).t()))
    out = []
    for name, crow, col, values, dense in cases:
        out.append((name, crow.to(device), col.to(device), None if values is None else values.to(device),
                    dense.to(device)))
    return out


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_matches_reference(device, reduce, dtype, index_dtype):
    for name, crow, col, values, dense in make_cases(dtype, index_dtype, device):
        out = gpuprim.spmm(crow, col, values, dense, reduce)
        assert out.is_contiguous()
        assert_matches_reference(out, crow, col, values, dense, reduce, f"{name}/{reduce}")


@pytest.mark.gpu
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_cuda_bitwise_equals_cpu(reduce, dtype, index_dtype):
    """The CPU kernel follows the CUDA kernel's order (row chunks, lane trees, fused multiply-adds): same bits."""
    for name, crow, col, values, dense in make_cases(dtype, index_dtype) + large_cases(dtype, index_dtype):
        cpu = gpuprim.spmm(crow, col, values, dense, reduce)
        cuda = gpuprim.spmm(crow.cuda(), col.cuda(), None if values is None else values.cuda(), dense.cuda(), reduce)
        assert_bitwise_equal(cuda.cpu(), cpu, f"{name}/{reduce}", nan_payload=False)


def large_cases(dtype, index_dtype):
    g = torch.Generator().manual_seed(31)
    cases = []
    for name, lengths, cols, f in (("power_law_f1", power_law_lengths(200_000, 10.0, g), 200_000, 1),
                                   ("power_law_f32", power_law_lengths(20_000, 10.0, g), 20_000, 32),
                                   ("giant_f128", torch.tensor([0, 300_000, 5]), 1000, 128)):
        crow, col = csr_from_lengths(lengths, cols, g, index_dtype)
        dense = torch.randn(cols, f, generator=g).to(dtype)
        cases.append((name, crow, col, torch.randn(col.numel(), generator=g).to(dtype), dense))
    return cases


def test_int32_and_int64_agree(device):
    for name, crow, col, values, dense in make_cases(torch.float32, torch.int64, device):
        for reduce in REDUCTIONS:
            a = gpuprim.spmm(crow, col, values, dense, reduce)
            b = gpuprim.spmm(crow.int(), col.int(), values, dense, reduce)
            assert_bitwise_equal(a, b, f"{name}/{reduce}")


def test_unweighted_equals_ones(device):
    for name, crow, col, _values, dense in make_cases(torch.float32, torch.int64, device):
        ones = torch.ones(col.numel(), dtype=dense.dtype, device=device)
        for reduce in REDUCTIONS:
            a = gpuprim.spmm(crow, col, None, dense, reduce)
            b = gpuprim.spmm(crow, col, ones, dense, reduce)
            assert_bitwise_equal(a, b, f"{name}/{reduce}", nan_payload=False)


def test_sparse_csr_input(device):
    g = torch.Generator().manual_seed(4)
    a = (torch.rand(40, 30, generator=g) < 0.2) * torch.randn(40, 30, generator=g)
    a_csr = a.to_sparse_csr().to(device)
    x = torch.randn(30, 8, generator=g).to(device)
    out = gpuprim.spmm(a_csr, x)
    expected = gpuprim.spmm(a_csr.crow_indices(), a_csr.col_indices(), a_csr.values(), x)
    assert_bitwise_equal(out, expected)
    torch.testing.assert_close(out.cpu(), a @ x.cpu(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="dense must have the matrix's 30 columns"):
        gpuprim.spmm(a_csr, x[:20])


def test_bad_input_raises_on_cpu():
    dense = torch.randn(5, 3)
    col = torch.tensor([0, 1, 4])
    for crow, message in ((torch.tensor([1, 2, 3]), r"crow\[0\] = 1 must be 0"),
                          (torch.tensor([0, 2, 1, 3]), r"crow\[2\] = 1 is less than crow\[1\] = 2"),
                          (torch.tensor([0, 2]), r"crow\[1\] = 2 must be 3"),
                          (torch.tensor([0, 4]), r"crow\[1\] = 4 is past the end")):
        with pytest.raises(ValueError, match="gpuprim.spmm: " + message):
            gpuprim.spmm(crow, col, None, dense)
    with pytest.raises(IndexError, match=r"gpuprim.spmm: col\[2\] = 5 is out of range"):
        gpuprim.spmm(torch.tensor([0, 3]), torch.tensor([0, 1, 5]), None, dense)
    with pytest.raises(TypeError, match="col must be of crow's dtype"):
        gpuprim.spmm(torch.tensor([0, 3]), col.int(), None, dense)
    with pytest.raises(TypeError, match="values must be of dense's dtype"):
        gpuprim.spmm(torch.tensor([0, 3]), col, torch.ones(3, dtype=torch.float64), dense)
    with pytest.raises(ValueError, match="values must be 1-D of col's length"):
        gpuprim.spmm(torch.tensor([0, 3]), col, torch.ones(2), dense)
    with pytest.raises(ValueError, match="reduce must be one of"):
        gpuprim.spmm(torch.tensor([0, 3]), col, None, dense, "prod")


@pytest.mark.gpu
def test_bad_input_on_cuda_is_recorded():
    dense = torch.randn(5, 3, device="cuda")
    gpuprim.spmm(torch.tensor([0, 3], device="cuda"), torch.tensor([0, 1, 7], device="cuda"), None, dense)
    with pytest.raises(gpuprim.InputError, match=r"gpuprim.spmm: col\[2\] = 7 is out of range"):
        gpuprim.check_errors()
    gpuprim.spmm(torch.tensor([0, 2, 1, 3], device="cuda"), torch.tensor([0, 1, 2], device="cuda"), None, dense)
    with pytest.raises(gpuprim.InputError, match=r"gpuprim.spmm: crow\[2\] = 1 is less than"):
        gpuprim.check_errors()


@pytest.mark.gpu
@pytest.mark.parametrize("features", [1, 8])
def test_offsets_out_of_order_with_long_rows_stay_in_bounds(features):
    # Every other row spans all nonzeros: more long rows than nnz allows, which the split pass's bounds must drop.
    nnz, pairs = 5000, 64
    crow = torch.tensor([0] + [nnz, 0] * pairs + [nnz], device="cuda")
    col = torch.randint(0, 10, (nnz,), device="cuda")
    dense = torch.randn(10, features, device="cuda")
    gpuprim.spmm(crow, col, None, dense)
    with pytest.raises(gpuprim.InputError, match=r"gpuprim.spmm: crow\[\d+\]"):
        gpuprim.check_errors()
    good = torch.tensor([0, 2, nnz], device="cuda")
    torch.testing.assert_close(gpuprim.spmm(good, col, None, dense), gpuprim.spmm(good.cpu(), col.cpu(), None,
                                                                                 dense.cpu()).cuda())


# ---------------------------------------------------------------- determinism, sync, graphs
def test_bitwise_reproducible(device):
    for _name, crow, col, values, dense in make_cases(torch.float32, torch.int64, device)[:12]:
        for reduce in REDUCTIONS:
            assert_deterministic(lambda: gpuprim.spmm(crow, col, values, dense, reduce))


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    name, crow, col, values, dense = make_cases(torch.float32, torch.int64, "cuda")[9]
    check_no_sync_and_graph_capture(lambda: gpuprim.spmm(crow, col, values, dense), replays=2)
    check_no_sync_and_graph_capture(lambda: gpuprim.csr_transpose(crow, col, dense.size(0)), replays=2)


# ---------------------------------------------------------------- autograd
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_gradcheck(device, reduce):
    g = torch.Generator().manual_seed(8)
    for lengths, cols, f in (([3, 0, 5, 1], 6, 4), ([2, 7], 5, 0), ([0, 40, 2], 9, 3)):
        crow, col = csr_from_lengths(lengths, cols, g)
        crow, col = crow.to(device), col.to(device)
        values = torch.randn(col.numel(), generator=g, dtype=torch.float64).to(device).requires_grad_()
        shape = (cols, f) if f else (cols,)
        dense = torch.randn(*shape, generator=g, dtype=torch.float64).to(device).requires_grad_()
        assert torch.autograd.gradcheck(lambda v, d: gpuprim.spmm(crow, col, v, d, reduce), (values, dense))
        assert torch.autograd.gradcheck(lambda d: gpuprim.spmm(crow, col, None, d, reduce), (dense,))


def test_max_min_gradient_goes_to_the_first_extreme(device):
    """Ties: the row's first nonzero (in its order) that attains the extreme gets the whole gradient (torch's amax
    would split it); a NaN extreme: the first NaN product; an empty row: nothing."""
    crow = torch.tensor([0, 3, 3, 5], device=device)
    col = torch.tensor([1, 0, 1, 0, 1], device=device)
    for reduce in ("max", "min"):
        dense = torch.tensor([[2.0, 5.0], [2.0, float("nan")]], device=device, requires_grad=True)
        values = torch.tensor([1.0, 1.0, 1.0, 3.0, -1.0], device=device, requires_grad=True)
        out = gpuprim.spmm(crow, col, values, dense, reduce)
        out.backward(torch.tensor([[1.0, 10.0], [100.0, 1000.0], [1e4, 1e5]], device=device))
        # column 0: rows 0 (tie of col 1 and col 0 at 2.0: nonzero 0 first) and 2 (3 * 2 vs -1 * 2);
        # column 1: rows 0 and 2 each have a NaN product (dense[1, 1]) and take it.
        winner0 = 3 if reduce == "max" else 4  # row 2, column 0: 6.0 at nonzero 3, -2.0 at nonzero 4
        want_values = torch.zeros(5)
        want_values[0] += 1.0 * 2.0
        want_values[0] += 10.0 * float("nan")  # nonzero 0 (col 1) is row 0's first NaN product in column 1
        want_values[winner0] += 1e4 * 2.0
        want_values[4] += 1e5 * float("nan")  # nonzero 4 (col 1) is row 2's NaN product in column 1
        got = values.grad.cpu()
        assert torch.equal(torch.isnan(got), torch.isnan(want_values)), (reduce, got)
        finite = ~torch.isnan(want_values)
        assert torch.equal(got[finite], want_values[finite]), (reduce, got)
        want_dense = torch.zeros(2, 2)
        want_dense[1, 0] += 1.0  # row 0, column 0: nonzero 0, col 1, weight 1
        want_dense[1, 1] += 10.0 + 1e5 * -1.0  # the NaN products of rows 0 and 2 (nonzeros 0 and 4)
        want_dense[int(col[winner0]), 0] += 1e4 * float(values.detach()[winner0])
        assert torch.equal(dense.grad.cpu(), want_dense), (reduce, dense.grad)


def test_opcheck(device):
    for name, crow, col, values, dense in make_cases(torch.float32, torch.int64, device):
        if name in ("nan_inf", "tiny_rows"):
            continue
        for reduce in REDUCTIONS:
            run_opcheck(torch.ops.gpuprim.spmm.default, (crow, col, values, dense, reduce))
    g = torch.Generator().manual_seed(9)
    crow, col = csr_from_lengths([3, 0, 5, 1], 6, g)
    crow, col = crow.to(device), col.to(device)
    values = torch.randn(col.numel(), generator=g, dtype=torch.float64).to(device).requires_grad_()
    dense = torch.randn(6, 4, generator=g, dtype=torch.float64).to(device).requires_grad_()
    for reduce in REDUCTIONS:
        run_opcheck(torch.ops.gpuprim.spmm.default, (crow, col, values, dense, reduce))
        run_opcheck(torch.ops.gpuprim.spmm.default, (crow, col, None, dense, reduce))
    for reduce in ("sum", "mean"):
        grad = torch.randn(4, 4, dtype=torch.float64, device=device)
        run_opcheck(torch.ops.gpuprim.spmm_backward.default, (grad, crow, col, dense.detach(), reduce))
    run_opcheck(torch.ops.gpuprim.csr_transpose.default, (crow, col, 6))


@pytest.mark.parametrize("dynamic", [False, True])
def test_compiles(device, dynamic):
    name, crow, col, values, dense = make_cases(torch.float32, torch.int64, device)[9]
    check_compiles(lambda c, k, v, d: gpuprim.spmm(c, k, v, d, "mean"), crow, col, values, dense, dynamic=dynamic)
    check_compiles(lambda c, k: gpuprim.csr_transpose(c, k, dense.size(0)), crow, col, dynamic=dynamic)


def test_compiled_backward(device):
    g = torch.Generator().manual_seed(12)
    crow, col = csr_from_lengths(power_law_lengths(64, 5.0, g).tolist(), 64, g)
    crow, col = crow.to(device), col.to(device)
    values = torch.randn(col.numel(), generator=g).to(device)
    dense = torch.randn(64, 16, generator=g).to(device).requires_grad_()
    check_compiled_backward(lambda d, c, k, v: gpuprim.spmm(c, k, v, d).square().sum(), dense, crow, col, values,
                            loss_atol=1e-2)
    check_compiled_backward(lambda d, c, k, v: gpuprim.spmm(c, k, v, d, "max").square().sum(), dense, crow, col,
                            values, loss_atol=1e-2)


@pytest.mark.parametrize("reduce", ("max", "min"))
def test_max_min_gradient_deterministic(device, reduce):
    g = torch.Generator().manual_seed(13)
    crow, col = csr_from_lengths(power_law_lengths(300, 6.0, g).tolist(), 200, g)
    crow, col = crow.to(device), col.to(device)
    values = torch.randint(-2, 3, (col.numel(),), generator=g).float().to(device)  # many ties
    dense = torch.randint(-2, 3, (200, 8), generator=g).float().to(device)

    def grads():
        v, d = values.clone().requires_grad_(), dense.clone().requires_grad_()
        gpuprim.spmm(crow, col, v, d, reduce).sin().sum().backward()
        return torch.cat([v.grad, d.grad.flatten()])

    assert_deterministic(grads)


@pytest.mark.gpu
@pytest.mark.parametrize("reduce", ("max", "min"))
@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16), ids=str)
def test_max_min_gradient_cuda_matches_cpu(reduce, dtype):
    """The winners are the same nonzeros on both devices (the products are exact per element)."""
    g = torch.Generator().manual_seed(14)
    crow, col = csr_from_lengths(power_law_lengths(500, 8.0, g).tolist(), 300, g)
    values = torch.randint(-3, 4, (col.numel(),), generator=g).to(dtype)
    dense = torch.randn(300, 16, generator=g).to(dtype)
    out_grad = torch.randn(500, 16, generator=g).to(dtype)
    result = []
    for device in ("cpu", "cuda"):
        v = values.detach().to(device).requires_grad_()
        d = dense.detach().to(device).requires_grad_()
        gpuprim.spmm(crow.to(device), col.to(device), v, d, reduce).backward(out_grad.to(device))
        result.append((v.grad.cpu(), d.grad.cpu()))
    assert_bitwise_equal(result[1][0], result[0][0], "values grad")  # an exact sum on both devices
    # dense: fp32 sums per column whose association may differ (CUDA's deterministic index_add chunks long runs)
    tol = 1e-5 if dtype == torch.float32 else 1.6e-2
    torch.testing.assert_close(result[1][1], result[0][1], rtol=tol, atol=tol)


# ---------------------------------------------------------------- csr_transpose
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
def test_csr_transpose(device, index_dtype):
    for name, crow, col, values, dense in make_cases(torch.float64, index_dtype, device):
        cols = dense.size(0)
        crow_t, col_t, perm = gpuprim.csr_transpose(crow, col, cols)
        assert crow_t.dtype == col_t.dtype == index_dtype and perm.dtype == torch.int64, name
        rows = torch.repeat_interleave(torch.arange(crow.numel() - 1), (crow[1:] - crow[:-1]).long().cpu())
        # The transpose lists, for each column c, the nonzeros (row, position) with col == c in row order.
        key = col.long().cpu() * max(crow.numel(), 1) + rows
        order = torch.argsort(key, stable=True)
        expected_crow = torch.zeros(cols + 1, dtype=torch.int64)
        expected_crow[1:] = torch.bincount(col.long().cpu(), minlength=cols).cumsum(0)
        assert torch.equal(crow_t.long().cpu(), expected_crow), name
        assert torch.equal(perm.cpu(), order), name
        assert torch.equal(col_t.long().cpu(), rows[order]), name
        if values is not None and dense.dim() == 2 and crow.numel() > 1:
            # (A^T)^T x = A x for the values through perm.
            again = gpuprim.spmm(crow_t, col_t, values[perm], torch.randn(crow.numel() - 1, 3, dtype=torch.float64,
                                                                         device=device))
            assert again.shape == (cols, 3)


def test_csr_transpose_bad_input_raises_on_cpu():
    with pytest.raises(IndexError, match=r"gpuprim.csr_transpose: col\[1\] = 9 is out of range"):
        gpuprim.csr_transpose(torch.tensor([0, 2]), torch.tensor([0, 9]), 4)
    with pytest.raises(ValueError, match=r"gpuprim.csr_transpose: crow\[1\] = 1 must be 2"):
        gpuprim.csr_transpose(torch.tensor([0, 1]), torch.tensor([0, 3]), 4)


def test_no_grad_fast_path(device):
    crow = torch.tensor([0, 2, 2, 5], device=device)
    col = torch.tensor([0, 3, 1, 2, 3], device=device)
    values = torch.randn(5, dtype=torch.float64, device=device)
    dense = torch.randn(4, 6, dtype=torch.float64, device=device)
    check_no_grad_fast_path(lambda d: gpuprim.spmm(crow, col, values, d), dense)


def test_gnn_layer_example(device):
    """examples/gnn_layer.py: a GraphSAGE network on gpuprim.spmm trains step for step with its pure-PyTorch twin,
    and a BFS on a Kronecker graph passes the Graph500 rules (the example asserts both)."""
    output = run_example("gnn_layer.py", "--device", device, "--steps", "3")
    assert "step 2: loss gpuprim" in output and "parents valid by the Graph500 rules" in output
