"""gpuprim.index_add against torch.index_add (a float64 reference for floats, exact for integers), CPU and CUDA."""
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
from samples import FLOAT_DTYPES, INDEX_DTYPES, INT_DTYPES

DTYPES = FLOAT_DTYPES + INT_DTYPES
SHAPE = (9, 6, 5)
PATTERNS = ("uniform", "duplicates", "all_equal", "sorted_runs")


# ---------------------------------------------------------------- reference
def make_index(pattern, n, rows, gen, dtype=torch.int64):
    if pattern == "uniform":
        idx = torch.randint(0, rows, (n,), generator=gen)
    elif pattern == "duplicates":  # two hot rows
        idx = torch.randint(0, 2, (n,), generator=gen) * (rows - 1)
    elif pattern == "all_equal":
        idx = torch.full((n,), rows // 2)
    else:  # long runs of equal rows, in order
        idx = torch.arange(n) * rows // max(n, 1)
    return idx.to(dtype)


def make_values(shape, dtype, gen):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    low, high = (0, 50) if dtype == torch.uint8 else (-50, 50)
    return torch.randint(low, high, shape, generator=gen, dtype=torch.int64).to(dtype)


def assert_matches_torch(out, input, dim, index, source, alpha=1, what=""):
    """Integers: exactly torch's (wrap-around included). Floats: within the error of a sum in the accumulator
    type (fp32 for 16/32-bit floats) of every destination's terms, plus the final rounding."""
    assert out.dtype == input.dtype and out.shape == input.shape and out.device == input.device, what
    idx = index.cpu().long().reshape(-1)
    if not input.dtype.is_floating_point:
        expected = torch.index_add(input.cpu(), dim, idx, source.cpu(), alpha=alpha)
        assert torch.equal(out.cpu(), expected), f"{what}: integer results differ"
        return
    ref = torch.index_add(input.cpu().double(), dim, idx, source.cpu().double(), alpha=alpha)
    abs_sum = torch.index_add(input.cpu().double().abs(), dim, idx, source.cpu().double().abs(), alpha=abs(alpha))
    count = torch.bincount(idx, minlength=input.size(dim) if input.dim() else 1).max().item() if idx.numel() else 0
    acc = torch.float32 if input.dtype in (torch.float16, torch.bfloat16) else input.dtype
    bound = (count + 2) * torch.finfo(acc).eps * abs_sum + torch.finfo(input.dtype).eps * ref.abs() + 1e-300
    err = (out.cpu().double() - ref).abs()
    assert bool((err <= bound).all()), f"{what}: max err {err.max()} (bound {bound.max()})"


def case(device, dtype, dim, pattern, index_dtype=torch.int64, shape=SHAPE, n=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    input = make_values(shape, dtype, g)
    rows = shape[dim]
    n = 2 * rows + 3 if n is None else n
    src_shape = list(shape)
    src_shape[dim] = n
    source = make_values(tuple(src_shape), dtype, g)
    index = make_index(pattern, n, rows, g, index_dtype)
    return input.to(device), index.to(device), source.to(device)


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", (0, 1, -1))
@pytest.mark.parametrize("pattern", PATTERNS)
def test_matches_torch(device, dtype, dim, pattern):
    input, index, source = case(device, dtype, dim, pattern)
    for deterministic in (True, False):
        with gpuprim.deterministic(deterministic):
            out = gpuprim.index_add(input, dim, index, source)
        assert_matches_torch(out, input, dim, index, source, what=f"{pattern} dim={dim} det={deterministic}")
    assert torch.equal(input, case(device, dtype, dim, pattern)[0]), "input was modified"


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("alpha", (2, -3))
def test_alpha_and_index_dtype(device, index_dtype, alpha):
    for dtype in (torch.float32, torch.int32, torch.float64):
        input, index, source = case(device, dtype, 1, "uniform", index_dtype)
        out = gpuprim.index_add(input, 1, index, source, alpha=alpha)
        assert_matches_torch(out, input, 1, index, source, alpha=alpha, what=f"{dtype} alpha={alpha}")
    input, index, source = case(device, torch.float32, 0, "duplicates", index_dtype)
    out = gpuprim.index_add(input, 0, index, source, alpha=0.5)
    assert_matches_torch(out, input, 0, index, source, alpha=0.5, what="alpha=0.5")


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("inner", (1, 3, 33, 128))
def test_long_runs_and_row_widths(device, pattern, inner):
    """Runs much longer than a chunk (64 sorted items), row widths with and without vector loads."""
    input, index, source = case(device, torch.float32, 0, pattern, shape=(50, inner), n=3000, seed=inner)
    for deterministic in (True, False):
        with gpuprim.deterministic(deterministic):
            out = gpuprim.index_add(input, 0, index, source)
        assert_matches_torch(out, input, 0, index, source, what=f"{pattern} inner={inner} det={deterministic}")


def test_strided_inputs(device):
    g = torch.Generator().manual_seed(7)
    input = make_values((6, 10), torch.float32, g).to(device).t()  # [10, 6], not contiguous
    source = make_values((14, 10), torch.float32, g).to(device)[::2].t()  # [10, 7], strided
    index = torch.tensor([0, 5, 5, 1, 0, 2, 5], device=device)
    out = gpuprim.index_add(input, 1, index, source)
    assert_matches_torch(out, input, 1, index, source)
    assert out.is_contiguous()


def test_empty_and_small(device):
    input = torch.randn(4, 3, device=device)
    out = gpuprim.index_add(input, 0, torch.empty(0, dtype=torch.long, device=device),
                            torch.empty(0, 3, device=device))
    assert torch.equal(out, input)
    empty = torch.empty(0, 3, device=device)
    assert gpuprim.index_add(empty, 0, torch.empty(0, dtype=torch.long, device=device), empty).shape == (0, 3)
    zero_width = torch.empty(4, 0, device=device)
    out = gpuprim.index_add(zero_width, 0, torch.tensor([1, 1], device=device), torch.empty(2, 0, device=device))
    assert out.shape == (4, 0)
    vec = torch.arange(5.0, device=device)
    index, source = torch.tensor([4, 0, 4], device=device), torch.tensor([1.0, 2.0, 3.0], device=device)
    out = gpuprim.index_add(vec, 0, index, source)
    assert torch.equal(out.cpu(), torch.tensor([2.0, 1.0, 2.0, 3.0, 8.0]))
    scalar = torch.tensor(1.5, device=device)
    out = gpuprim.index_add(scalar, 0, torch.tensor([0], device=device), torch.tensor([2.0], device=device))
    assert out.shape == () and out.item() == 3.5


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("alpha", [1, 2, 0, True, False, 0.5])
def test_bool_matches_torch(device, alpha):
    g = torch.Generator().manual_seed(0)
    for dim in (0, 1):
        input = (torch.rand(6, 5, generator=g) < 0.3).to(device)
        index = torch.randint(0, input.size(dim), (9,), generator=g).to(device)
        source = (torch.rand(*((9, 5) if dim == 0 else (6, 9)), generator=g) < 0.5).to(device)
        for deterministic in (False, True):
            with gpuprim.deterministic(deterministic):
                out = gpuprim.index_add(input, dim, index, source, alpha=alpha)
            assert out.dtype == torch.bool
            assert torch.equal(out, input.index_add(dim, index, source, alpha=alpha))
    mine = input.clone()
    gpuprim.index_add_(mine, 1, index, source, alpha=alpha)
    assert torch.equal(mine, input.index_add(1, index, source, alpha=alpha))
    run_opcheck(torch.ops.gpuprim.index_add.default, (input, 1, index, source), {"alpha": alpha})


def test_bad_arguments(device):
    input = torch.zeros(4, 3, device=device)
    index = torch.tensor([0, 3], device=device)
    source = torch.ones(2, 3, device=device)
    with pytest.raises(IndexError, match="dim"):
        gpuprim.index_add(input, 2, index, source)
    with pytest.raises(TypeError, match="source must be of input's dtype"):
        gpuprim.index_add(input, 0, index, source.double())
    with pytest.raises(TypeError, match="index must be an int32 or int64 tensor"):
        gpuprim.index_add(input, 0, index.float(), source)
    with pytest.raises(TypeError, match="input must be"):
        gpuprim.index_add(input.to(torch.complex64), 0, index, source.to(torch.complex64))
    with pytest.raises(ValueError, match="index must be of source's length"):
        gpuprim.index_add(input, 0, index[:1], source)
    with pytest.raises(ValueError, match="source must be of input's size"):
        gpuprim.index_add(input, 0, index, torch.ones(2, 4, device=device))
    with pytest.raises(ValueError, match="index must be a 0-d or 1-D"):
        gpuprim.index_add(input, 0, index.reshape(2, 1), source)
    with pytest.raises(ValueError, match="alpha must be an integer"):
        gpuprim.index_add(input.long(), 0, index, source.long(), alpha=0.5)


def test_out_of_range_raises_on_cpu():
    input = torch.zeros(4, 3)
    for bad in (4, -1):
        with pytest.raises(IndexError, match=rf"gpuprim.index_add: index\[1\] = {bad} is out of range for dimension 0 "
                           r"of size 4"):
            gpuprim.index_add(input, 0, torch.tensor([0, bad]), torch.ones(2, 3))


@pytest.mark.gpu
def test_out_of_range_on_cuda_skips_or_raises():
    input = torch.zeros(4, 3, device="cuda")
    index = torch.tensor([0, 4, -1, 3, 1 << 40], device="cuda")
    source = torch.ones(5, 3, device="cuda")
    for deterministic in (True, False):
        with gpuprim.deterministic(deterministic):
            out = gpuprim.index_add(input, 0, index, source)
        expected = torch.zeros(4, 3)
        expected[0] = 1
        expected[3] = 1
        assert torch.equal(out.cpu(), expected), "out-of-range rows must be skipped"
        with pytest.raises(gpuprim.InputError, match=r"gpuprim.index_add: index\[1\] = 4 is out of range"):
            gpuprim.check_errors()  # the lowest bad position was recorded
    with gpuprim.validate(), pytest.raises(IndexError, match="index must be in"):
        gpuprim.index_add(input, 0, index, source)


# ---------------------------------------------------------------- autograd
def test_gradcheck(device):
    g = torch.Generator().manual_seed(3)
    input = torch.randn(5, 4, 3, generator=g, dtype=torch.float64).to(device).requires_grad_()
    source = torch.randn(5, 6, 3, generator=g, dtype=torch.float64).to(device).requires_grad_()
    index = torch.tensor([3, 0, 3, 3, 1, 0], device=device)
    assert torch.autograd.gradcheck(lambda a, b: gpuprim.index_add(a, 1, index, b, alpha=2.5), (input, source))


def test_grad_matches_torch(device):
    input, index, source = case(device, torch.float32, 1, "duplicates")
    grad_out = torch.randn(input.shape, device=device)
    grads = []
    for fn in (gpuprim.index_add, torch.index_add):
        a, b = input.clone().requires_grad_(), source.clone().requires_grad_()
        fn(a, 1, index, b, alpha=-2).backward(grad_out)
        grads.append((a.grad, b.grad))
    torch.testing.assert_close(grads[0], grads[1])


# ---------------------------------------------------------------- dispatch checks
def test_opcheck(device):
    input, index, source = case(device, torch.float32, 1, "duplicates")
    op = torch.ops.gpuprim.index_add.default
    run_opcheck(op, (input, 1, index, source), {"alpha": 2.0})
    run_opcheck(op, (input.requires_grad_(), 1, index, source.requires_grad_()), {"deterministic": True})
    i, x, s = case(device, torch.int16, 0, "uniform")
    run_opcheck(op, (i, 0, x.int(), s), {"alpha": 3, "deterministic": False})


@pytest.fixture
def deterministic_mode():
    """Compiled vs eager comparisons are bitwise: the atomic path's float sums vary run to run."""
    with gpuprim.deterministic(True):
        yield


def test_compiles(device, deterministic_mode):
    input, index, source = case(device, torch.float32, 0, "uniform")

    def fn(a, i, b):
        return gpuprim.index_add(a, 0, i, b, alpha=2) * 2

    check_compiles(fn, input, index, source)
    check_compiles(fn, input, index, source, dynamic=True)

    def step(b, a, i):
        return (gpuprim.index_add(a, 0, i, b) ** 2).sum()

    check_compiled_backward(step, source.clone().requires_grad_(), input, index)


# ---------------------------------------------------------------- CUDA
@pytest.mark.gpu
@pytest.mark.parametrize("pattern", PATTERNS + ("zipf",))
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.float64), ids=str)
def test_cuda_deterministic_bitwise(pattern, dtype):
    rows, n, inner = 20000, 60000, 33
    g = torch.Generator().manual_seed(11)
    if pattern == "zipf":
        index = (torch.rand(n, generator=g).pow(-1.5).long() - 1).clamp_max(rows - 1)
    else:
        index = make_index(pattern, n, rows, g)
    input = torch.randn(rows, inner, generator=g).to(dtype).cuda()
    source = torch.randn(n, inner, generator=g).to(dtype).cuda()
    index = index.cuda()
    with gpuprim.deterministic(True):
        first = gpuprim.index_add(input, 0, index, source)
        assert_deterministic(lambda: gpuprim.index_add(input, 0, index, source), runs=5)
        # the order of equal indices is the original one: a shuffled copy of the data gives the same bits
        # only for exact sums, so here: the same result again after other work on the GPU
        torch.randn(1 << 20, device="cuda").sum()
        assert_bitwise_equal(first, gpuprim.index_add(input, 0, index, source), "after other work")
    assert_matches_torch(first, input, 0, index, source, what=pattern)


@pytest.mark.gpu
def test_cuda_deterministic_int_and_dims():
    for dtype in (torch.int8, torch.int64, torch.bfloat16):
        for dim in (0, 1, 2):
            input, index, source = case("cuda", dtype, dim, "duplicates", shape=(40, 70, 3), n=500)
            with gpuprim.deterministic(True):
                out = gpuprim.index_add(input, dim, index, source)
                assert_deterministic(lambda: gpuprim.index_add(input, dim, index, source))
            assert_matches_torch(out, input, dim, index, source, what=f"{dtype} dim={dim}")


@pytest.mark.gpu
@pytest.mark.parametrize("deterministic", (True, False))
def test_cuda_no_sync_and_graph_capture(deterministic):
    input, index, source = case("cuda", torch.float32, 0, "uniform", shape=(1000, 64), n=3000)
    # Whole numbers: their fp32 sums are exact in any order, so the atomic path's replay matches bitwise too.
    input, source = input.round(), source.round()
    with gpuprim.deterministic(deterministic):
        check_no_sync_and_graph_capture(lambda: gpuprim.index_add(input, 0, index, source))


@pytest.mark.gpu
def test_cuda_matches_cpu():
    input, index, source = case("cpu", torch.float64, 1, "uniform", shape=(30, 500, 7), n=4000)
    cpu = gpuprim.index_add(input, 1, index, source)
    with gpuprim.deterministic(True):
        cuda = gpuprim.index_add(input.cuda(), 1, index.cuda(), source.cuda())
    torch.testing.assert_close(cuda.cpu(), cpu, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- in place
def test_in_place(device):
    input, index, source = case(device, torch.float32, 1, "duplicates")
    expected = gpuprim.index_add(input, 1, index, source, alpha=2)
    for deterministic in (True, False):
        with gpuprim.deterministic(deterministic):
            target = input.clone()
            version = target._version
            assert gpuprim.index_add_(target, 1, index, source, alpha=2) is target
            assert target._version > version
            torch.testing.assert_close(target, expected)
            strided = input.transpose(0, 2).contiguous().transpose(0, 2)  # same values, not contiguous
            gpuprim.index_add_(strided, 1, index, source, alpha=2)
            torch.testing.assert_close(strided, expected)
    # source aliasing input: computed from the values before the update, as torch's
    x = torch.arange(6.0, device=device)
    gpuprim.index_add_(x, 0, torch.tensor([5, 0, 1], device=device), x[:3])
    assert torch.equal(x.cpu(), torch.tensor([1.0, 3.0, 2.0, 3.0, 4.0, 5.0]))


def test_in_place_not_differentiable(device):
    input = torch.zeros(4, 3, device=device)
    source = torch.ones(2, 3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable"):
        gpuprim.index_add_(input.clone(), 0, torch.tensor([0, 1], device=device), source)
    with torch.no_grad():
        gpuprim.index_add_(input, 0, torch.tensor([0, 1], device=device), source)
    assert input.sum().item() == 6.0
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():  # a tangent would be left stale: refused as well
        dual = fwAD.make_dual(torch.zeros(4, 3, device=device), torch.ones(4, 3, device=device))
        with pytest.raises(RuntimeError, match="not differentiable"):
            gpuprim.index_add_(dual, 0, torch.tensor([0, 1], device=device), torch.ones(2, 3, device=device))


def test_in_place_opcheck_and_compile(device, deterministic_mode):
    input, index, source = case(device, torch.float32, 0, "uniform")
    run_opcheck(torch.ops.gpuprim.index_add_.default, (input.clone(), 0, index, source), {"alpha": 3})

    def fn(a, i, b):
        c = a * 1
        gpuprim.index_add_(c, 0, i, b)
        return c

    check_compiles(fn, input, index, source)


def test_no_grad_fast_path(device):
    # small integers: CUDA's atomic sums are exact in any order, so the calls must agree bit for bit
    source = torch.randint(-8, 8, (30, 5), device=device).double()
    index = torch.randint(0, 8, (30,), device=device)
    target = torch.zeros(8, 5, dtype=torch.float64, device=device)
    check_no_grad_fast_path(lambda s: gpuprim.index_add(target, 0, index, s), source)
