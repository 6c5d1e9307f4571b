"""gpuprim.sum / gpuprim.mean: values against float64 and exact references, bitwise reproducibility
(runs, launch configurations, permutations, chunkings, batch sizes, CPU vs CUDA), autograd, compile."""
import math
from fractions import Fraction

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
    opcheck_sample_ok,
    run_opcheck,
)
from samples import FLOAT_DTYPES, value_samples

HAS_CUDA = torch.cuda.is_available()
OPS = {"sum": gpuprim.sum, "mean": gpuprim.mean}
# (blocks, threads) for _set_reduce_config. CUDA: grid x block; CPU: chunks per row x lanes per chunk.
CONFIGS = [(0, 0), (1, 32), (3, 64), (7, 96), (64, 256), (1000, 1024)]


@pytest.fixture(autouse=True)
def _reset_reduce_config():
    gpuprim._set_reduce_config(0, 0)
    yield
    gpuprim._set_reduce_config(0, 0)


def bins_bits(dtype):
    return 64 if dtype == torch.float64 else 32  # bits kept below max|x| (exact_sum.h: 32 (K - 1))


def reference(x, dim, keepdim, mean):
    """Readable reference: the correctly rounded float64 sum (math.fsum) of each reduced slice,
    laid out as torch.sum(x.double(), dim, keepdim) would be (and /count for mean)."""
    wide = x.double().cpu()
    shape = wide.sum(dim=dim, keepdim=keepdim).shape
    reduced = set(range(x.dim())) if dim is None or dim == [] else {d % max(x.dim(), 1) for d in (
        [dim] if isinstance(dim, int) else dim)}
    kept = [d for d in range(x.dim()) if d not in reduced]
    rows = wide.permute(kept + sorted(reduced)).reshape(math.prod(wide.shape[d] for d in kept), -1) if x.dim() else \
        wide.reshape(1, 1)
    values = []
    for row in rows.tolist():
        if any(math.isnan(v) for v in row) or (float("inf") in row and float("-inf") in row):
            total = float("nan")
        elif float("inf") in row or float("-inf") in row:
            total = float("inf") if float("inf") in row else float("-inf")
        else:
            try:
                total = math.fsum(row)
            except OverflowError:  # the exact sum is beyond float64 (or only an intermediate was)
                exact = sum(Fraction(v) for v in row)
                try:
                    total = float(exact)
                except OverflowError:
                    total = float("inf") if exact > 0 else float("-inf")
        values.append(total / len(row) if mean and row else (float("nan") if mean else total))
    return torch.tensor(values, dtype=torch.float64).reshape(shape)


def reduced_count(x, dim):
    if dim is None:
        return x.numel()
    dims = [dim] if isinstance(dim, int) else dim
    return math.prod(x.shape[d] for d in dims) if x.dim() else 1


def assert_close_to_reference(out, x, dim, keepdim, op, out_dtype=None):
    """NaN/inf exactly where the float64 reference has them; finite values within the bound of the
    algorithm: each value loses at most 2^-bits * max|x| before one final rounding to out_dtype
    (half an ulp; one more fp64 rounding and division for mean). Much tighter than an fp32 sum's bound."""
    out_dtype = out_dtype or x.dtype
    ref = reference(x, dim, keepdim, op == "mean").cpu()
    assert out.dtype == out_dtype and out.shape == ref.shape and out.device == x.device
    out64 = out.double().cpu()
    assert torch.equal(torch.isnan(out64), torch.isnan(ref)), (out64, ref)
    inf = torch.isinf(ref)
    assert torch.equal(out64[inf], ref[inf])
    n = max(reduced_count(x, dim), 1)
    xa = x.double().abs().cpu().nan_to_num(0.0, 0.0, 0.0)
    if dim is None:
        amax = (xa.max() if xa.numel() else torch.tensor(0.0, dtype=torch.float64)).reshape(ref.shape)
    elif xa.numel():
        amax = xa.amax(dim=dim, keepdim=keepdim)
    else:
        amax = torch.zeros(ref.shape, dtype=torch.float64)
    slice_err = n * 2.0 ** -bins_bits(x.dtype) * amax
    if op == "mean":
        slice_err = slice_err / n
    info = torch.finfo(out_dtype)
    bound = slice_err * (1 + info.eps) + (info.eps + 2.0**-52) * ref.abs() + info.smallest_normal * info.eps + 1e-300
    finite = torch.isfinite(ref) & torch.isfinite(out64)
    # The reference itself may overflow out_dtype where we do not, or vice versa: compare finite ones.
    err = (out64 - ref).abs()
    assert bool((err[finite] <= bound[finite]).all()), f"max err {err[finite].max()} vs {bound[finite].max()}"


def dims_of(x):
    if x.dim() == 0:
        return [None, -1]
    if x.dim() == 1:
        return [None, 0, [0]]
    if x.dim() == 2:
        return [None, 0, 1, -1, [0, 1], [1, 0]]
    return [None, 0, 1, 2, [0, 2], [1, 2], [2, 0, 1]]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_matches_reference(device, dtype, op):
    for sample in value_samples(device, dtype):
        for dim in dims_of(sample.x):
            for keepdim in (False, True):
                out = OPS[op](sample.x, dim, keepdim)
                assert_close_to_reference(out, sample.x, dim, keepdim, op)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("out_dtype", FLOAT_DTYPES, ids=str)
def test_dtype_argument(device, op, out_dtype):
    x = torch.randn(37, 129, generator=torch.Generator().manual_seed(5)).to(device)
    for dim in (None, 1):
        out = OPS[op](x, dim, dtype=out_dtype)
        assert_close_to_reference(out, x, dim, False, op, out_dtype=out_dtype)


def special_inputs(dtype, n=5003, seed=0):
    """Named 1-D inputs that stress the algorithm: dynamic range, cancellation, subnormals, ..."""
    g = torch.Generator().manual_seed(seed)
    big = 1e30 if dtype in (torch.float32, torch.float64) else (3e3 if dtype == torch.float16 else 1e30)
    small = 1e-30 if dtype in (torch.float32, torch.float64) else (1e-3 if dtype == torch.float16 else 1e-30)
    logs = torch.empty(n, dtype=torch.float64).uniform_(math.log(small), math.log(big), generator=g)
    signs = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double()
    normal = torch.randn(n, generator=g, dtype=torch.float64).to(dtype)
    half = normal[: n // 2]
    cancel = torch.cat([half, -half])
    cancel = cancel[torch.randperm(cancel.numel(), generator=g)]
    tiny = torch.finfo(dtype).smallest_normal
    subnormal = (torch.randn(n, generator=g, dtype=torch.float64) * tiny / 8).to(dtype)
    inputs = {
        "normal": normal,
        "dynamic_range": (signs * logs.exp()).to(dtype),
        "cancellation": cancel,
        "all_equal": torch.full((n,), 0.1, dtype=dtype),
        "subnormals": subnormal,
        "mixed_subnormal_normal": torch.cat([subnormal, normal[:100]]),
        "max_values": torch.full((7,), torch.finfo(dtype).max / 4, dtype=dtype),
        "one": normal[:1],
    }
    if dtype == torch.float64:
        inputs["fp64_extremes"] = torch.tensor([1e308, -1e308, 1.5e308, 1e-310, -3e-320, 7.0, 1e300, -1e300],
                                               dtype=dtype)
        inputs["fp64_huge_and_tiny"] = torch.cat([(signs * logs.exp() * 1e270), (signs * logs.exp() * 1e-270)])
    return inputs


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_special_inputs(device, dtype):
    for name, x in special_inputs(dtype).items():
        x = x.to(device)
        for op in OPS:
            assert_close_to_reference(OPS[op](x), x, None, False, op)
        if name == "cancellation":
            assert_bitwise_equal(gpuprim.sum(x).cpu(), torch.zeros((), dtype=dtype), name)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_permutation_and_chunking_invariance(device, dtype):
    """The same multiset of values gives the same bits whatever the order and the chunking."""
    g = torch.Generator().manual_seed(7)
    for name, x in special_inputs(dtype, n=3001).items():
        x = x.to(device)
        expected = gpuprim.sum(x)
        for _ in range(4):
            perm = torch.randperm(x.numel(), generator=g).to(device)
            assert_bitwise_equal(gpuprim.sum(x[perm]), expected, f"{name} permuted")
        for blocks, threads in CONFIGS:
            gpuprim._set_reduce_config(blocks, threads)
            assert_bitwise_equal(gpuprim.sum(x), expected, f"{name} config {blocks}x{threads}")
            assert_bitwise_equal(gpuprim.mean(x.view(1, -1), 1), gpuprim.mean(x).view(1), f"{name} mean rows")
        gpuprim._set_reduce_config(0, 0)
        # Split in two and as a 2-D reduction over both dims: same multiset, same bits.
        if x.numel() % 2 == 0:
            assert_bitwise_equal(gpuprim.sum(x.view(2, -1), [0, 1]), expected, f"{name} 2-D")
            assert_bitwise_equal(gpuprim.sum(x.view(2, -1).t(), [1, 0]), expected, f"{name} transposed")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_launch_configs_rows(device, dtype):
    g = torch.Generator().manual_seed(3)
    for shape in [(5, 7), (33, 1000), (3, 20000), (200, 4099)]:
        x = (torch.randn(*shape, generator=g, dtype=torch.float64) * torch.rand(*shape, generator=g).pow(8) * 1e3).to(
            dtype).to(device)
        expected = [gpuprim.sum(x, 1), gpuprim.mean(x, 0), gpuprim.sum(x)]
        for blocks, threads in CONFIGS:
            gpuprim._set_reduce_config(blocks, threads)
            got = [gpuprim.sum(x, 1), gpuprim.mean(x, 0), gpuprim.sum(x)]
            for a, b in zip(got, expected):
                assert_bitwise_equal(a, b, f"{shape} config {blocks}x{threads}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_batch_independence(device, dtype):
    """Row i's result does not depend on the other rows or on the batch size."""
    g = torch.Generator().manual_seed(11)
    rows = (torch.randn(9, 3000, generator=g, dtype=torch.float64) * 10.0 ** torch.randint(-6, 6, (9, 1), generator=g)
            ).to(dtype).to(device)
    alone = [gpuprim.sum(rows[i : i + 1], 1) for i in range(rows.shape[0])]
    for batch in range(1, rows.shape[0] + 1):
        out = gpuprim.sum(rows[:batch], 1)
        for i in range(batch):
            assert_bitwise_equal(out[i : i + 1], alone[i], f"row {i} in batch {batch}")
    # Rows inside a larger matrix reduced along dim 0 (columns) give the same bits as alone.
    cols = rows.t().contiguous()
    assert_bitwise_equal(gpuprim.sum(cols, 0), torch.cat(alone), "columns")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_exact_sum_rounded_once(device, dtype):
    """When every value lies within the kept range, the result is the exact sum rounded once."""
    g = torch.Generator().manual_seed(21)
    for n in (1, 2, 33, 1000, 9001):
        # |x| in [1, 2): exact slicing (fp32: within 2^8 of max; fp64: within 2^11 of max).
        x = ((torch.rand(n, generator=g, dtype=torch.float64) + 1) * torch.where(
            torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double()).to(dtype)
        exact = sum(Fraction(v) for v in x.tolist())
        expected = torch.tensor(float(exact), dtype=torch.float64).to(dtype)  # float(Fraction) rounds correctly
        if dtype == torch.float32:  # the exact fp32-value sum fits in 53 bits: one rounding to fp32
            assert float(exact) == exact
        assert_bitwise_equal(gpuprim.sum(x.to(device)).cpu(), expected, f"n={n}")
        assert gpuprim.sum(x.to(device)).item() == pytest.approx(math.fsum(x.tolist()), rel=1e-7)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nan_inf(device, dtype):
    inf, nan = float("inf"), float("nan")
    cases = [([1.0, inf, 2.0], inf), ([-inf, 1.0], -inf), ([inf, -inf], nan), ([nan, 1.0], nan),
             ([inf, nan], nan), ([inf, inf, 5.0], inf), ([-0.0, -0.0], 0.0)]
    for values, expected in cases:
        x = torch.tensor(values, dtype=dtype, device=device)
        out = gpuprim.sum(x).cpu()
        assert_bitwise_equal(out, torch.tensor(expected, dtype=dtype), str(values))
    x = torch.tensor([[1.0, nan, 3.0], [inf, 1.0, 2.0], [1.0, 2.0, 3.0]], dtype=dtype, device=device)
    out = gpuprim.sum(x, 1).double().cpu()
    assert math.isnan(out[0]) and out[1] == inf and out[2] == 6.0


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_empty(device, dtype):
    x = torch.empty(0, dtype=dtype, device=device)
    assert_bitwise_equal(gpuprim.sum(x).cpu(), torch.zeros((), dtype=dtype))
    assert math.isnan(gpuprim.mean(x).item())
    y = torch.empty(4, 0, 3, dtype=dtype, device=device)
    assert_bitwise_equal(gpuprim.sum(y, 1).cpu(), torch.zeros(4, 3, dtype=dtype))
    assert gpuprim.sum(y, 0).shape == (0, 3)
    assert gpuprim.sum(y, [0, 2], keepdim=True).shape == (1, 0, 1)


def test_overflow_to_inf(device):
    x = torch.tensor([60000.0, 60000.0], dtype=torch.float16, device=device)
    assert gpuprim.sum(x).item() == float("inf")
    assert gpuprim.sum(x, dtype=torch.float32).item() == 120000.0
    y = torch.tensor([1.7e308, 1.7e308], dtype=torch.float64, device=device)
    assert gpuprim.sum(y).item() == float("inf")
    assert gpuprim.mean(y).item() == float("inf")
    z = torch.tensor([3e38, 3e38, -3e38], dtype=torch.float32, device=device)
    assert gpuprim.sum(z).item() == pytest.approx(3e38, rel=1e-7)  # exact accumulation: no intermediate inf


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_bitwise_reproducible_20_runs(device, dtype):
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(300_001, generator=g, dtype=torch.float64) * 100).to(dtype).to(device)
    assert_deterministic(lambda: gpuprim.sum(x), runs=20)
    rows = x[:300_000].view(600, 500)
    assert_deterministic(lambda: (gpuprim.sum(rows, 1), gpuprim.mean(rows, 0)), runs=20)


def test_bad_arguments(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(IndexError, match=r"gpuprim.sum: dim must be in \[-2, 1\], got 2"):
        gpuprim.sum(x, 2)
    with pytest.raises(IndexError, match=r"gpuprim.mean: dim must be in \[-2, 1\], got -3"):
        gpuprim.mean(x, [0, -3])
    with pytest.raises(ValueError, match="gpuprim.sum: dim must be a list of distinct dims"):
        gpuprim.sum(x, [1, -1])
    with pytest.raises(TypeError, match="gpuprim.sum: x must be a float16, bfloat16, float32, float64, "):
        gpuprim.sum(torch.ones(3, dtype=torch.complex64, device=device))
    with pytest.raises(TypeError, match="gpuprim.mean: x must be floating"):
        gpuprim.mean(torch.ones(3, dtype=torch.bool, device=device))
    with pytest.raises(TypeError, match="gpuprim.sum: dtype must be float16, bfloat16, float32, float64, "):
        gpuprim.sum(x, dtype=torch.complex64)
    with pytest.raises(TypeError, match="gpuprim.mean: dtype must be"):
        gpuprim.mean(x, dtype=torch.complex64)
    with pytest.raises(ValueError, match="threads must be 0 or a multiple of 32"):
        gpuprim._set_reduce_config(1, 48)


def test_shapes_match_torch(device):
    x = torch.randn(2, 3, 4, device=device)
    for dim in (None, 0, -1, [0, 2], [], [2, 1, 0]):
        for keepdim in (False, True):
            theirs = torch.sum(x, dim, keepdim=keepdim) if dim is not None else (
                torch.sum(x, dim=None, keepdim=keepdim) if keepdim else torch.sum(x))
            ours = gpuprim.sum(x, dim, keepdim)
            assert ours.shape == theirs.shape, (dim, keepdim)
    s = torch.tensor(2.5, device=device)
    assert gpuprim.sum(s).shape == () and gpuprim.sum(s, 0).item() == 2.5 and gpuprim.mean(s, -1, True).shape == ()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=str)
def test_opcheck(device, op, dtype):
    for sample in value_samples(device, dtype):
        if sample.name in ("ragged9001", "long_rows", "constant") or not opcheck_sample_ok(sample.x):
            continue
        if op == "mean" and sample.x.numel() == 0:
            continue  # NaN output: opcheck compares with NaN != NaN (test_empty covers it)
        run_opcheck(getattr(torch.ops.gpuprim, op).default, (sample.x, None), {})
        if sample.x.dim() >= 1:
            run_opcheck(getattr(torch.ops.gpuprim, op).default, (sample.x, [-1], True), {"dtype": torch.float64})


@pytest.mark.parametrize("op", OPS)
def test_opcheck_with_grad(device, op):
    x = torch.randn(6, 70, dtype=torch.float64, device=device, requires_grad=True)
    run_opcheck(getattr(torch.ops.gpuprim, op).default, (x, [1]), {})
    run_opcheck(getattr(torch.ops.gpuprim, op).default, (x, None, False), {})
    y = torch.randn(3, 5, 4, dtype=torch.float32, device=device, requires_grad=True)
    run_opcheck(getattr(torch.ops.gpuprim, op).default, (y, [0, 2], True), {"dtype": torch.float64})


@pytest.mark.parametrize("op", OPS)
def test_gradcheck(device, op):
    x = torch.randn(4, 5, 3, dtype=torch.float64, device=device, requires_grad=True)
    for dim in (None, 0, 2, [0, 2], [1, 0]):
        for keepdim in (False, True):
            fn = lambda t: OPS[op](t, dim, keepdim)  # noqa: E731
            assert torch.autograd.gradcheck(fn, (x,))
            assert torch.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("op", OPS)
def test_grad_matches_torch(device, op):
    x = torch.randn(7, 300, dtype=torch.float32, device=device, requires_grad=True)
    g = torch.randn(300, device=device)
    (ours,) = torch.autograd.grad(OPS[op](x, 0), x, g)
    (theirs,) = torch.autograd.grad(getattr(torch, op)(x, 0), x, g)
    torch.testing.assert_close(ours, theirs)
    h = torch.randn(7, 300, dtype=torch.float16, device=device, requires_grad=True)
    (grad16,) = torch.autograd.grad(OPS[op](h, dtype=torch.float32), h)
    assert grad16.dtype == torch.float16


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        return gpuprim.sum(x * 2, 1) + gpuprim.mean(x, [0, 1], keepdim=True)

    check_compiles(f, torch.randn(8, 300, device=device), dynamic=dynamic)
    check_compiles(f, torch.randn(5, 17, device=device), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    def step(x):
        return gpuprim.mean(gpuprim.sum(x, -1).square())

    x = torch.randn(4, 100, device=device, requires_grad=True)
    check_compiled_backward(step, x)


def test_cpp_config_knob_registered():
    assert hasattr(torch.ops.gpuprim, "_set_reduce_config")


# ---------------------------------------------------------------- CUDA only

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_cuda_matches_cpu_bitwise(dtype):
    cases = [(s.name, s.x) for s in value_samples("cpu", dtype)] + list(special_inputs(dtype).items())
    for name, x in cases:
        for dim in dims_of(x):
            for op in OPS:
                cpu = OPS[op](x, dim)
                for blocks, threads in CONFIGS[:3]:
                    gpuprim._set_reduce_config(blocks, threads)
                    assert_bitwise_equal(OPS[op](x.cuda(), dim).cpu(), cpu, f"{name} {op} dim={dim} {blocks}x{threads}")
                gpuprim._set_reduce_config(0, 0)
        assert_bitwise_equal(gpuprim.sum(x.cuda(), dtype=torch.float64).cpu(), gpuprim.sum(x, dtype=torch.float64),
                             f"{name} dtype=float64")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("n", [1, 7, 4097, 65537, 1 << 20, 3_000_017, 40_000_001])
def test_cuda_sizes_and_alignment(dtype, n):
    """Sizes hitting every path (head/body/tail, split rows, combine), at misaligned offsets too."""
    g = torch.Generator().manual_seed(n)
    base = torch.randn(n + 3, generator=g, dtype=torch.float64).to(dtype)
    base_cuda = base.cuda()
    for offset in (0, 1, 3):
        x, x_cuda = base[offset : offset + n], base_cuda[offset : offset + n]
        expected = gpuprim.sum(x)
        assert_bitwise_equal(gpuprim.sum(x_cuda).cpu(), expected, f"n={n} offset={offset}")
        for blocks, threads in CONFIGS[1:]:
            gpuprim._set_reduce_config(blocks, threads)
            assert_bitwise_equal(gpuprim.sum(x_cuda).cpu(), expected, f"n={n} offset={offset} {blocks}x{threads}")
        gpuprim._set_reduce_config(0, 0)
    perm = torch.randperm(n, generator=g).cuda()
    assert_bitwise_equal(gpuprim.sum(base_cuda[:n][perm]).cpu(), gpuprim.sum(base[:n]), f"n={n} permuted")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_cuda_rows_match_cpu(dtype):
    g = torch.Generator().manual_seed(4)
    for shape in [(1, 1), (65, 1), (1000, 3), (4096, 257), (17, 100_003), (2, 3_000_000)]:
        x = torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
        for dim in (1, 0):
            cpu = gpuprim.sum(x, dim)
            for blocks, threads in CONFIGS:
                gpuprim._set_reduce_config(blocks, threads)
                assert_bitwise_equal(gpuprim.sum(x.cuda(), dim).cpu(), cpu, f"{shape} dim={dim} {blocks}x{threads}")
            gpuprim._set_reduce_config(0, 0)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=str)
def test_cuda_columns_match_cpu(dtype):
    """Reductions over non-last dims ([outer, n, inner] kernel, with and without splitting n)."""
    g = torch.Generator().manual_seed(12)
    for shape, dim in [((100_000, 3), 0), ((5, 70_001, 7), 1), ((3, 4, 5, 6), [1, 2]), ((2, 3, 40_000), 0),
                       ((1, 9, 1, 33), 1), ((7, 0, 5), 1), ((0, 4, 5), 1), ((4096, 257), 0)]:
        x = (torch.randn(*shape, generator=g, dtype=torch.float64) * 10.0 ** torch.randint(-8, 8, shape, generator=g)
             ).to(dtype)
        for op in OPS:
            cpu = OPS[op](x, dim)
            for blocks, threads in CONFIGS:
                gpuprim._set_reduce_config(blocks, threads)
                assert_bitwise_equal(OPS[op](x.cuda(), dim).cpu(), cpu, f"{shape} {op} dim={dim} {blocks}x{threads}")
            gpuprim._set_reduce_config(0, 0)
    # A column reduced in a matrix gives the bits of the same values reduced alone, as a row.
    m = torch.randn(3000, 37, generator=g).cuda()
    alone = torch.stack([gpuprim.sum(m[:, j].contiguous()) for j in range(37)])
    assert_bitwise_equal(gpuprim.sum(m, 0), alone, "columns vs rows")


@pytest.mark.gpu
def test_cuda_batch_sizes_match_single_rows():
    g = torch.Generator().manual_seed(8)
    x = (torch.randn(300, 5000, generator=g) * 10.0 ** torch.randint(-20, 20, (300, 1), generator=g)).cuda()
    alone = torch.stack([gpuprim.sum(x[i]) for i in range(0, 300, 37)])
    for batch in (1, 2, 37, 38, 150, 300):
        out = gpuprim.sum(x[:batch], 1)
        for j, i in enumerate(range(0, batch, 37)):
            assert_bitwise_equal(out[i], alone[j], f"row {i} batch {batch}")


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randn(3, 100_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.sum(x, 1))
    check_no_sync_and_graph_capture(lambda: gpuprim.sum(x))
    check_no_sync_and_graph_capture(lambda: gpuprim.mean(x, 0))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    n = 2**31 + 4099
    x = torch.ones(n, dtype=torch.float16, device="cuda")  # 4 GB
    assert gpuprim.sum(x, dtype=torch.float64).item() == n
    assert gpuprim.mean(x).item() == 1.0
    x[n - 1] = 2.0
    x[2**31 - 1] = -5.0
    assert gpuprim.sum(x, dtype=torch.float64).item() == n - 5
    gpuprim._set_reduce_config(1, 32)  # one warp reads all of it (chunks of at most 2^30 values)
    assert gpuprim.sum(x, dtype=torch.float64).item() == n - 5
    gpuprim._set_reduce_config(0, 0)
    rows = x[: 2**31].view(2, 2**30)
    assert gpuprim.sum(rows, 1, dtype=torch.float64).tolist() == [2**30, 2**30 - 6]


FORMATS = {torch.float16: (11, -24, 15), torch.bfloat16: (8, -133, 127), torch.float32: (24, -149, 127),
           torch.float64: (53, -1074, 1023)}


def round_fraction(q, dtype):
    """Round-to-nearest-even of the exact rational q into dtype (subnormals, overflow to inf)."""
    precision, min_lsb, max_exp = FORMATS[dtype]
    if q == 0:
        return 0.0
    sign, a = (-1.0 if q < 0 else 1.0), abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    lsb = max(e - precision + 1, min_lsb)
    scaled = a / Fraction(2) ** lsb
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    value = Fraction(n) * Fraction(2) ** lsb
    if value >= Fraction(2) ** (max_exp + 1):
        return sign * float("inf")
    return sign * float(value)


@pytest.mark.parametrize("out_dtype", FLOAT_DTYPES, ids=str)
def test_final_rounding_is_correct(device, out_dtype):
    """Exactly sliced inputs (fp64 values within 2^10 of the largest) whose sums land everywhere in
    out_dtype's range: normal, subnormal, underflow to +-0, ties, overflow. One correct rounding."""
    g = torch.Generator().manual_seed(31)
    precision, min_lsb, max_exp = FORMATS[out_dtype]
    checked = 0
    for center in (min_lsb - 3, min_lsb + 2, min_lsb + precision, 0, max_exp - 2, max_exp):
        for trial in range(40):
            n = int(torch.randint(1, 6, (1,), generator=g))
            mant = torch.randint(-(2**20), 2**20, (n,), generator=g, dtype=torch.int64)
            shifts = torch.randint(-10, 1, (n,), generator=g)
            values = [math.ldexp(int(m), center - 20 + int(s)) for m, s in zip(mant, shifts)]
            if trial % 4 == 0:  # an exact tie between two neighbours of the format: N + 1/2 ulps
                lsb = max(center - precision + 1, min_lsb)
                top = 2 ** (precision - 1)
                big = int(torch.randint(top, 2 * top, (1,), generator=g)) if lsb > min_lsb else int(
                    torch.randint(0, top, (1,), generator=g))
                sign = 1.0 if trial % 8 == 0 else -1.0
                values = [sign * math.ldexp(big, lsb), sign * math.ldexp(1, lsb - 1)]
            x = torch.tensor(values, dtype=torch.float64)
            exact = sum(Fraction(v) for v in values)
            expected = torch.tensor(round_fraction(exact, out_dtype), dtype=torch.float64).to(out_dtype)
            out = gpuprim.sum(x.to(device), dtype=out_dtype).cpu()
            assert_bitwise_equal(out, expected, f"{values} -> {out_dtype}")
            checked += 1
    assert checked == 240


@pytest.mark.parametrize("op", [gpuprim.sum, gpuprim.mean], ids=["sum", "mean"])
def test_no_grad_fast_path(device, op):
    x = torch.randn(6, 70, dtype=torch.float64, device=device)
    check_no_grad_fast_path(lambda t: op(t, 1), x)
