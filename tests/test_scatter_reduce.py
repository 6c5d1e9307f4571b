"""gpuprim.scatter_reduce / scatter_add against torch.scatter_reduce (float64 reference for float sums and means,
exact otherwise), on CPU and CUDA."""
import pytest
import torch

import gpuprim
from op_checks import (
    assert_deterministic,
    check_compiled_backward,
    check_compiles,
    check_no_grad_fast_path,
    check_no_sync_and_graph_capture,
    run_opcheck,
)
from samples import FLOAT_DTYPES, INDEX_DTYPES, INT_DTYPES

DTYPES = FLOAT_DTYPES + INT_DTYPES
REDUCTIONS = ("sum", "mean", "amax", "amin")


# ---------------------------------------------------------------- reference
def make_values(shape, dtype, gen):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    low, high = (0, 50) if dtype == torch.uint8 else (-50, 50)
    return torch.randint(low, high, shape, generator=gen, dtype=torch.int64).to(dtype)


def make_case(device, dtype, dim, pattern="uniform", shape=(6, 5, 4), index_shape=(6, 5, 4), src_shape=None, seed=0,
              index_dtype=torch.int64):
    g = torch.Generator().manual_seed(seed)
    input = make_values(shape, dtype, g)
    src = make_values(src_shape or index_shape, dtype, g)
    rows = shape[dim]
    if pattern == "uniform":
        index = torch.randint(0, rows, index_shape, generator=g)
    elif pattern == "duplicates":
        index = torch.randint(0, 2, index_shape, generator=g) * (rows - 1)
    else:  # all_equal
        index = torch.full(index_shape, rows // 2)
    return input.to(device), index.to(index_dtype).to(device), src.to(device)


def assert_matches_torch(out, input, dim, index, src, reduce, include_self=True, what=""):
    assert out.dtype == input.dtype and out.shape == input.shape and out.device == input.device, what
    idx = index.cpu().long()
    exact = not input.dtype.is_floating_point or reduce in ("amax", "amin")
    if exact:
        expected = torch.scatter_reduce(input.cpu(), dim, idx, src.cpu(), reduce, include_self=include_self)
        assert torch.equal(out.cpu().nan_to_num(0.0) if out.is_floating_point() else out.cpu(),
                           expected.nan_to_num(0.0) if expected.is_floating_point() else expected), \
            f"{what}: results differ"
        return
    ref = torch.scatter_reduce(input.cpu().double(), dim, idx, src.cpu().double(), reduce, include_self=include_self)
    abs_ref = torch.scatter_reduce(input.cpu().double().abs(), dim, idx, src.cpu().double().abs(), "sum",
                                   include_self=True)
    count = torch.zeros(input.shape, dtype=torch.float64).scatter_add(dim, idx, torch.ones(idx.shape,
                                                                                           dtype=torch.float64))
    acc = torch.float32 if input.dtype in (torch.float16, torch.bfloat16) else input.dtype
    bound = (count.max() + 3) * torch.finfo(acc).eps * abs_ref + torch.finfo(input.dtype).eps * ref.abs() + 1e-300
    err = (out.cpu().double() - ref).abs()
    assert bool((err <= bound).all()), f"{what}: max err {err.max()}"


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", (True, False))
def test_matches_torch(device, dtype, reduce, include_self):
    for dim in (0, 1, -1):
        for pattern in ("uniform", "duplicates", "all_equal"):
            input, index, src = make_case(device, dtype, dim, pattern, index_shape=(6, 5, 4) if dim != 0 else (9, 5, 4))
            for deterministic in (True, False):
                with gpuprim.deterministic(deterministic):
                    out = gpuprim.scatter_reduce(input, dim, index, src, reduce, include_self=include_self)
                assert_matches_torch(out, input, dim, index, src, reduce, include_self,
                                     what=f"dim={dim} {pattern} det={deterministic}")


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
def test_scatter_add_and_smaller_index(device, index_dtype):
    """index smaller than src and input (only src's corner is read), int32 index."""
    for dim in (0, 1, 2):
        input, index, src = make_case(device, torch.float32, dim, "duplicates", shape=(7, 6, 5),
                                      index_shape=(4, 3, 5), src_shape=(5, 6, 7), index_dtype=index_dtype)
        out = gpuprim.scatter_add(input, dim, index, src)
        expected = torch.scatter_add(input.cpu().double(), dim, index.cpu().long(),
                                     src.cpu().double()[:4, :3, :5].contiguous())
        torch.testing.assert_close(out.cpu().double(), expected, rtol=1e-5, atol=1e-5)


def test_nan_propagation(device):
    input = torch.tensor([0.0, 1.0, 2.0, float("nan")], device=device)
    index = torch.tensor([0, 0, 1, 2, 3], device=device)
    src = torch.tensor([float("nan"), 5.0, -1.0, 7.0, 1.0], device=device)
    for reduce in ("amax", "amin"):
        out = gpuprim.scatter_reduce(input, 0, index, src, reduce)
        expected = torch.scatter_reduce(input.cpu(), 0, index.cpu(), src.cpu(), reduce)
        assert torch.equal(torch.isnan(out.cpu()), torch.isnan(expected)), reduce
        assert torch.equal(out.cpu().nan_to_num(0.0), expected.nan_to_num(0.0)), reduce


def test_empty_and_scalar(device):
    input = torch.randn(4, 3, device=device)
    empty = torch.empty(0, 3, dtype=torch.long, device=device)
    assert torch.equal(gpuprim.scatter_reduce(input, 0, empty, empty.float(), "mean"), input)
    scalar = torch.tensor(2.0, device=device)
    out = gpuprim.scatter_add(scalar, 0, torch.tensor(0, device=device), torch.tensor(3.0, device=device))
    assert out.shape == () and out.item() == 5.0


@pytest.mark.parametrize("reduce", ["sum", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_bool_matches_torch(device, reduce, include_self):
    g = torch.Generator().manual_seed(1)
    input = (torch.rand(5, 4, generator=g) < 0.5).to(device)
    index = torch.randint(0, 5, (7, 4), generator=g).to(device)
    src = (torch.rand(7, 4, generator=g) < 0.5).to(device)
    for deterministic in (False, True):
        with gpuprim.deterministic(deterministic):
            out = gpuprim.scatter_reduce(input, 0, index, src, reduce, include_self=include_self)
        # torch's CUDA scatter has no bool kernel: its CPU result is the reference
        expected = input.cpu().scatter_reduce(0, index.cpu(), src.cpu(), reduce, include_self=include_self)
        assert torch.equal(out.cpu(), expected)
    if reduce == "sum" and include_self:
        small = index[:5, :3] % 4
        assert torch.equal(gpuprim.scatter_add(input, 1, small, src), input.scatter_add(1, small, src))
        mine = input.clone()
        gpuprim.scatter_add_(mine, 0, index, src)
        assert torch.equal(mine, input.scatter_add(0, index, src))
    run_opcheck(torch.ops.gpuprim.scatter_reduce.default, (input, 0, index, src, reduce),
                {"include_self": include_self})


def test_bool_mean_refused_like_torch(device):
    x = torch.zeros(3, dtype=torch.bool, device=device)
    with pytest.raises(TypeError, match="input must be not bool for reduce='mean'"):
        gpuprim.scatter_reduce(x, 0, torch.tensor([0, 1], device=device), x[:2], "mean")
    with pytest.raises(NotImplementedError):
        x.scatter_reduce(0, torch.tensor([0, 1], device=device), x[:2], "mean")


def test_bad_arguments(device):
    input = torch.zeros(4, 3, device=device)
    index = torch.zeros(2, 3, dtype=torch.long, device=device)
    src = torch.ones(2, 3, device=device)
    with pytest.raises(ValueError, match="reduce must be one of 'sum', 'prod', 'mean', 'amax', 'amin', got 'max'"):
        gpuprim.scatter_reduce(input, 0, index, src, "max")
    with pytest.raises(IndexError, match="dim"):
        gpuprim.scatter_reduce(input, 3, index, src)
    with pytest.raises(TypeError, match="src must be of input's dtype"):
        gpuprim.scatter_reduce(input, 0, index, src.double())
    with pytest.raises(TypeError, match="index must be an int32 or int64"):
        gpuprim.scatter_reduce(input, 0, index.float(), src)
    with pytest.raises(ValueError, match="index must be of input's number of dims"):
        gpuprim.scatter_reduce(input, 0, index[0], src)
    with pytest.raises(ValueError, match="index must be no larger than src"):
        gpuprim.scatter_reduce(input, 0, torch.zeros(3, 3, dtype=torch.long, device=device), src)
    with pytest.raises(ValueError, match="index must be no larger than input"):
        gpuprim.scatter_reduce(input, 0, torch.zeros(2, 4, dtype=torch.long, device=device), torch.ones(2, 4,
                                                                                                     device=device))


def test_out_of_range_raises_on_cpu():
    with pytest.raises(IndexError, match=r"gpuprim.scatter_add: index.flatten\(\)\[1\] = 4 is out of range for "
                       r"dimension 0 of size 4"):
        gpuprim.scatter_add(torch.zeros(4, 3), 0, torch.tensor([[0, 4, 1]]), torch.ones(1, 3))
    with pytest.raises(IndexError, match=r"gpuprim.scatter_reduce: index.flatten\(\)\[1\] = -1 "):
        gpuprim.scatter_reduce(torch.zeros(4, 3), 1, torch.tensor([[0, -1, 1]]), torch.ones(1, 3), "amax")


@pytest.mark.gpu
def test_out_of_range_on_cuda_skips_or_raises():
    input = torch.zeros(4, 3, device="cuda")
    index = torch.tensor([[0, 4, 3], [-1, 1, 1]], device="cuda")
    src = torch.ones(2, 3, device="cuda")
    for deterministic in (True, False):
        with gpuprim.deterministic(deterministic):
            out = gpuprim.scatter_add(input, 0, index, src)
        expected = torch.zeros(4, 3)
        expected[0, 0] = 1
        expected[3, 2] = 1
        expected[1, 1] = 1
        expected[1, 2] = 1
        assert torch.equal(out.cpu(), expected)
        with pytest.raises(gpuprim.InputError, match=r"gpuprim.scatter_add: index.flatten\(\)\[1\] = 4 "):
            gpuprim.check_errors()
    with gpuprim.validate(), pytest.raises(IndexError, match="index must be in"):
        gpuprim.scatter_add(input, 0, index, src)


# ---------------------------------------------------------------- autograd
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", (True, False))
def test_gradcheck(device, reduce, include_self):
    g = torch.Generator().manual_seed(5)
    input = torch.randn(5, 4, generator=g, dtype=torch.float64).to(device).requires_grad_()
    src = torch.randn(6, 4, generator=g, dtype=torch.float64).to(device).requires_grad_()
    index = torch.tensor([[0, 1, 2, 3], [0, 1, 2, 3], [4, 4, 4, 4], [0, 0, 0, 0], [1, 2, 3, 4], [2, 2, 1, 1]],
                         device=device)
    fn = lambda a, b: gpuprim.scatter_reduce(a, 0, index, b, reduce, include_self=include_self)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (input, src))


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", (True, False))
def test_grad_matches_torch(device, reduce, include_self):
    """Including ties for amax/amin (small integers stored as floats): the gradient is shared as torch's."""
    g = torch.Generator().manual_seed(9)
    input = torch.randint(0, 3, (5, 4), generator=g).double().to(device)
    src = torch.randint(0, 3, (7, 4), generator=g).double().to(device)
    index = torch.randint(0, 5, (7, 4), generator=g).to(device)
    grad_out = torch.randn(5, 4, generator=g, dtype=torch.float64).to(device)
    grads = []
    for fn in (gpuprim.scatter_reduce, torch.scatter_reduce):
        a, b = input.clone().requires_grad_(), src.clone().requires_grad_()
        fn(a, 0, index, b, reduce, include_self=include_self).backward(grad_out)
        grads.append((a.grad, b.grad))
    torch.testing.assert_close(grads[0], grads[1])


def test_grad_smaller_index(device):
    input = torch.randn(4, 3, dtype=torch.float64, device=device, requires_grad=True)
    src = torch.randn(3, 5, dtype=torch.float64, device=device, requires_grad=True)
    index = torch.tensor([[0, 3, 3], [1, 1, 0]], device=device)
    assert torch.autograd.gradcheck(lambda a, b: gpuprim.scatter_add(a, 0, index, b), (input, src))
    gpuprim.scatter_add(input, 0, index, src).sum().backward()
    assert torch.equal(src.grad[2:].cpu(), torch.zeros(1, 5, dtype=torch.float64))
    assert torch.equal(src.grad[:, 3:].cpu(), torch.zeros(3, 2, dtype=torch.float64))


# ---------------------------------------------------------------- dispatch checks
def test_opcheck(device):
    op = torch.ops.gpuprim.scatter_reduce.default
    for reduce in REDUCTIONS:
        input, index, src = make_case(device, torch.float32, 1, "duplicates")
        run_opcheck(op, (input, 1, index, src, reduce), {"include_self": False})
        run_opcheck(op, (input.requires_grad_(), 1, index, src.requires_grad_(), reduce), {"deterministic": True})
    input, index, src = make_case(device, torch.int32, 0, "uniform", index_dtype=torch.int32)
    run_opcheck(op, (input, 0, index, src, "mean"), {"deterministic": False})


def test_compiles(device):
    input, index, src = make_case(device, torch.float32, 1, "uniform")
    # Whole numbers: scatter_add's default CUDA path adds with atomics, in any order; these sums are exact in
    # any order, so compiled and eager agree bitwise (random floats differed in the last bit once on the H200).
    input, src = (input * 8).round(), (src * 8).round()

    def fn(a, i, b):
        return gpuprim.scatter_reduce(a, 1, i, b, "amax", include_self=False) + gpuprim.scatter_add(a, 1, i, b)

    check_compiles(fn, input, index, src)
    check_compiles(fn, input, index, src, dynamic=True)

    def step(b, a, i):
        return (gpuprim.scatter_reduce(a, 1, i, b, "mean") ** 2).sum()

    check_compiled_backward(step, src.clone().requires_grad_(), input, index)


# ---------------------------------------------------------------- CUDA
@pytest.mark.gpu
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("pattern", ("uniform", "duplicates", "all_equal"))
def test_cuda_deterministic_bitwise(reduce, pattern):
    input, index, src = make_case("cuda", torch.float32, 0, pattern, shape=(3000, 40), index_shape=(50000, 40),
                                  seed=2)
    with gpuprim.deterministic(True):
        first = gpuprim.scatter_reduce(input, 0, index, src, reduce, include_self=False)
        assert_deterministic(lambda: gpuprim.scatter_reduce(input, 0, index, src, reduce, include_self=False), runs=5)
    assert_matches_torch(first, input, 0, index, src, reduce, include_self=False, what=pattern)


@pytest.mark.gpu
def test_cuda_matches_cpu_float64():
    input, index, src = make_case("cpu", torch.float64, 1, "uniform", shape=(40, 300, 6), index_shape=(40, 900, 6))
    for reduce in REDUCTIONS:
        cpu = gpuprim.scatter_reduce(input, 1, index, src, reduce)
        with gpuprim.deterministic(True):
            cuda = gpuprim.scatter_reduce(input.cuda(), 1, index.cuda(), src.cuda(), reduce)
        torch.testing.assert_close(cuda.cpu(), cpu, rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("deterministic", (True, False))
def test_cuda_no_sync_and_graph_capture(deterministic):
    input, index, src = make_case("cuda", torch.float32, 0, "uniform", shape=(1000, 8), index_shape=(3000, 8))
    # Whole numbers: their fp32 sums are exact in any order, so the atomic path's replay matches bitwise too.
    input, src = input.round(), src.round()
    with gpuprim.deterministic(deterministic):
        check_no_sync_and_graph_capture(lambda: gpuprim.scatter_add(input, 0, index, src))
        check_no_sync_and_graph_capture(lambda: gpuprim.scatter_reduce(input, 0, index, src, "mean"))


# ---------------------------------------------------------------- in place
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_in_place(device, reduce):
    input, index, src = make_case(device, torch.float32, 1, "duplicates")
    expected = gpuprim.scatter_reduce(input, 1, index, src, reduce, include_self=False)
    for deterministic in (True, False):
        with gpuprim.deterministic(deterministic):
            target = input.clone()
            version = target._version
            assert gpuprim.scatter_reduce_(target, 1, index, src, reduce, include_self=False) is target
            assert target._version > version
            torch.testing.assert_close(target, expected)
            strided = input.transpose(0, 2).contiguous().transpose(0, 2)
            gpuprim.scatter_reduce_(strided, 1, index, src, reduce, include_self=False)
            torch.testing.assert_close(strided, expected)
    target = input.clone()
    gpuprim.scatter_add_(target, 1, index, src)
    torch.testing.assert_close(target, gpuprim.scatter_add(input, 1, index, src))


def test_in_place_opcheck_and_compile(device):
    input, index, src = make_case(device, torch.float32, 0, "uniform")
    input, src = (input * 8).round(), (src * 8).round()  # exact sums in any order (see test_compiles)
    run_opcheck(torch.ops.gpuprim.scatter_reduce_.default, (input.clone(), 0, index, src, "amin"),
                {"include_self": False})

    def fn(a, i, b):
        c = a * 1
        gpuprim.scatter_reduce_(c, 0, i, b, "mean")
        return c

    check_compiles(fn, input, index, src)


@pytest.mark.gpu
def test_cuda_more_than_2_pow_32_destinations():
    """input of 2^32 + 8 int8 elements (4 GiB): destinations need 64-bit sort keys (the wide path)."""
    numel = (1 << 32) + 8
    base = numel - 108
    input = torch.zeros(numel, dtype=torch.int8, device="cuda")
    g = torch.Generator(device="cuda").manual_seed(0)
    index = torch.randint(base, numel, (1 << 20,), device="cuda", generator=g)
    src = torch.randint(-3, 4, (1 << 20,), device="cuda", generator=g).to(torch.int8)
    expected_tail = torch.zeros(108, dtype=torch.int64, device="cuda").index_add_(0, index - base, src.long())
    for deterministic in (True, False):
        with gpuprim.deterministic(deterministic):
            out = gpuprim.scatter_add(input, 0, index, src)
        assert torch.equal(out[base:], expected_tail.to(torch.int8)), f"det={deterministic}"
        assert int(torch.count_nonzero(out[:base])) == 0
        del out


@pytest.mark.parametrize("reduce", ["sum", "amax"])
def test_no_grad_fast_path(device, reduce):
    # small integers: CUDA's atomic sums are exact in any order, so the calls must agree bit for bit
    src = torch.randint(-8, 8, (30, 4), device=device).double()
    index = torch.randint(0, 6, (30, 4), device=device)
    target = torch.randint(-8, 8, (6, 4), device=device).double()
    check_no_grad_fast_path(lambda s: gpuprim.scatter_reduce(target, 0, index, s, reduce), src)
    check_no_grad_fast_path(lambda s: gpuprim.scatter_add(target, 0, index, s), src)


def test_in_place_refuses_a_tangent(device):
    import torch.autograd.forward_ad as fwAD

    index = torch.tensor([[0, 1, 2]], device=device)
    with fwAD.dual_level():
        dual = fwAD.make_dual(torch.zeros(3, 3, device=device), torch.ones(3, 3, device=device))
        with pytest.raises(RuntimeError, match="not differentiable"):
            gpuprim.scatter_reduce_(dual, 0, index, torch.ones(1, 3, device=device), "sum")
        with pytest.raises(RuntimeError, match="not differentiable"):
            gpuprim.scatter_add_(dual, 0, index, torch.ones(1, 3, device=device))
