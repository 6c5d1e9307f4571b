"""gpuprim.topk against a pure-PyTorch reference (and torch.topk), on CPU and CUDA.

The tie contract makes the answer unique: among equal values the lower index wins, NaN ranks above
+inf, -0.0 == +0.0. The reference is a stable sort of a widened copy (float64 / int64) narrowed to k,
so indices are compared exactly and values bitwise; torch.topk is checked for equal values.
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
    opcheck_sample_ok,
    run_opcheck,
)
from samples import FLOAT_DTYPES, value_samples

INT_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
DTYPES = FLOAT_DTYPES + INT_DTYPES


def gather_bits(x, dim, indices):
    """torch.gather on the raw bits (keeps NaN payloads and the sign of zero)."""
    bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    return torch.gather(x.view(bits), dim, indices).view(x.dtype)


def reference_topk(x, k, dim, largest):
    """Stable sort (descending if largest) of a widened CPU copy, first k: ties by lower index, NaN
    above every number (first if largest, last otherwise), -0.0 == +0.0."""
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.long, device=x.device)
    wide = x.cpu().double() if x.is_floating_point() else x.cpu().long()
    order = torch.sort(wide, stable=True, dim=dim, descending=largest).indices.narrow(dim, 0, k).contiguous()
    order = order.to(x.device)
    return gather_bits(x, dim, order), order


def check_topk(x, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    values, indices = gpuprim.topk(x, k, dim, largest, sorted)
    expected_shape = list(x.shape)
    if x.dim() > 0:
        expected_shape[dim] = k
    assert list(values.shape) == expected_shape and list(indices.shape) == expected_shape
    assert values.dtype == x.dtype and indices.dtype == torch.int64
    assert values.device == x.device and indices.device == x.device
    assert values.is_contiguous() and indices.is_contiguous()
    ref_values, ref_indices = reference_topk(x, k, dim, largest)
    assert torch.equal(indices.cpu(), ref_indices.cpu()), "indices differ from the tie-contract reference"
    assert_bitwise_equal(values, ref_values, "values")
    if x.numel() > 0:
        # torch.topk picks the same values (its tie order may differ; values cannot).
        theirs = torch.topk(x.cpu(), k, dim, largest, True).values
        torch.testing.assert_close(values.cpu(), theirs, rtol=0, atol=0, equal_nan=True)
    return values, indices


def ks_for(n):
    return sorted({k for k in (0, 1, 2, 31, 32, 33, 1024, n // 2, n - 1, n) if 0 <= k <= n})


def dims_of(x):
    return [-1] if x.dim() <= 1 else list(range(-1, x.dim()))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_matches_reference(device, dtype, largest):
    for sample in value_samples(device, dtype):
        x = sample.x
        for dim in dims_of(x):
            n = 1 if x.dim() == 0 else x.size(dim)
            for k in ks_for(n) if x.numel() <= 5000 else sorted({k for k in (0, 1, 33, n) if k <= n}):
                check_topk(x, k, dim, largest)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_special_values(device, dtype, largest):
    """NaN (any sign or payload) ranks above +inf; -0.0 == +0.0 by index; all-NaN and all -inf rows."""
    bits_dtype = {2: torch.int16, 4: torch.int32, 8: torch.int64}[torch.finfo(dtype).bits // 8]
    x = torch.tensor([1.0, float("nan"), -0.0, 0.0, float("-inf"), -2.0, -0.0, float("inf"), 0.0, 3.0] * 7,
                     dtype=dtype)
    raw = x.view(bits_dtype)
    raw[1] = raw[1] | torch.tensor(1, dtype=bits_dtype)  # another payload
    raw[11] = raw[11] | torch.tensor(torch.iinfo(bits_dtype).min, dtype=bits_dtype)  # a "-NaN"
    x = x.to(device)
    for k in (0, 1, 5, 7, 8, 20, 69, 70):
        check_topk(x, k, 0, largest)
        check_topk(x.reshape(7, 10), min(k, 10), 1, largest)
    for fill in (float("nan"), float("-inf"), float("inf"), -0.0):
        row = torch.full((3, 700), fill, dtype=dtype, device=device)
        for k in (1, 33, 700):
            values, indices = check_topk(row, k, 1, largest)
            assert torch.equal(indices.cpu(), torch.arange(k).expand(3, k))


@pytest.mark.parametrize("largest", [True, False])
def test_ties(device, largest):
    g = torch.Generator().manual_seed(5)
    # Rows full of ties (few distinct values), ties exactly at the k-th boundary, constant rows.
    few = torch.randint(0, 4, (16, 3000), generator=g).float().to(device)
    for k in (1, 31, 32, 33, 750, 1024, 2999, 3000):
        check_topk(few, k, 1, largest)
    boundary = torch.arange(100, dtype=torch.float32).repeat(5, 1)
    boundary[:, 40:60] = 50.0  # the k-th value is 50 with 20 copies
    for k in (45, 50, 55, 60):
        check_topk(boundary.to(device), k, 1, largest)
    check_topk(torch.full((4, 5000), 2.5, device=device), 1024, 1, largest)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32], ids=str)
def test_shapes_and_paths(device, dtype):
    """Row lengths around the CUDA paths (warp: <= 512 elements and k <= 64; block radix select,
    in-block sort up to k = 2048, sorted afterwards beyond), many rows, one row, empty rows."""
    g = torch.Generator().manual_seed(11)
    for shape, ks in [((300, 1), (0, 1)), ((1000, 33), (1, 8, 33)), ((50, 512), (1, 64, 65, 512)),
                      ((20, 513), (1, 64, 513)), ((4, 5000), (50, 512, 513, 1025, 2048, 2049, 5000)),
                      ((1, 70_001), (1, 100, 1024)), ((0, 7), (0, 3)), ((7, 0), (0,))]:
        x = torch.randn(shape, generator=g, dtype=torch.float64)
        x = (x * 100).to(dtype) if not dtype.is_floating_point else x.to(dtype)
        for k in ks:
            check_topk(x.to(device), k, -1, True)
            check_topk(x.to(device), k, -1, False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
def test_indices_match_torch_without_ties(device, dtype):
    """Where no two values tie, the answer is torch.topk's exactly (values and indices)."""
    for shape, dim in (((13, 3000), 1), ((3000, 7), 0), ((2, 40, 50), 1)):
        x = torch.randperm(torch.Size(shape).numel(), generator=torch.Generator().manual_seed(1)).reshape(shape)
        x = x.to(dtype).to(device)
        for k in (1, 7, 33, x.size(dim)):
            for largest in (True, False):
                values, indices = gpuprim.topk(x, k, dim, largest)
                expected = torch.topk(x.cpu(), k, dim, largest, True)
                assert torch.equal(values.cpu(), expected.values) and torch.equal(indices.cpu(), expected.indices)


def test_sorted_false_same_order(device):
    x = torch.randn(9, 700, device=device)
    a = gpuprim.topk(x, 40, sorted=False)
    b = gpuprim.topk(x, 40, sorted=True)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_views_and_dims(device):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(20, 30, 40, generator=g).to(device)
    for view in (x, x.transpose(0, 2), x[:, ::3, 1:]):
        for dim in range(-3, 3):
            for k in (1, 5, view.size(dim)):
                check_topk(view, k, dim, dim % 2 == 0)


def test_scalar(device):
    x = torch.tensor(2.5, device=device)
    for k in (0, 1):
        values, indices = gpuprim.topk(x, k)
        assert values.shape == () and values.item() == 2.5 and indices.item() == 0


@pytest.mark.parametrize("size", [1, 5000, 300_000])
def test_bitwise_reproducible(device, size):
    g = torch.Generator().manual_seed(size)
    x = torch.randint(-50, 50, (size,), generator=g).float().to(device)  # many ties
    assert_deterministic(lambda: gpuprim.topk(x, min(size, 100)), runs=3)
    rows = torch.randn(64, size // 64 + 3, generator=g).to(device)
    assert_deterministic(lambda: gpuprim.topk(rows, min(rows.size(1), 33), 1, False), runs=3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16], ids=str)
def test_opcheck(device, dtype):
    for sample in value_samples(device, dtype):
        if sample.name in ("ragged9001", "long_rows", "constant") or not opcheck_sample_ok(sample.x):
            continue
        n = 1 if sample.x.dim() == 0 else sample.x.size(-1)
        for k, largest in ((min(n, 3), True), (n // 2, False)):
            run_opcheck(torch.ops.gpuprim.topk.default, (sample.x, k, -1, largest, True))


def test_opcheck_with_grad(device):
    x = torch.randn(6, 70, dtype=torch.float64, device=device, requires_grad=True)
    run_opcheck(torch.ops.gpuprim.topk.default, (x, 5, 1, True, True))
    run_opcheck(torch.ops.gpuprim.topk.default, (x, 3, 0, False, False))
    grad = torch.randn(6, 5, dtype=torch.float64, device=device)
    indices = gpuprim.topk(x.detach(), 5, 1)[1]
    run_opcheck(torch.ops.gpuprim.topk_backward.default, (grad, indices, [6, 70], 1))


@pytest.mark.parametrize("largest", [True, False])
def test_gradcheck(device, largest):
    # Distinct values: the gradient of a selection is defined away from ties.
    x = torch.randperm(45, dtype=torch.float64).reshape(5, 9).to(device).add_(0.25).requires_grad_()
    for dim, k in ((0, 2), (1, 4), (-1, 9)):
        assert torch.autograd.gradcheck(lambda t: gpuprim.topk(t, k, dim, largest)[0], (x,))
    scalar = torch.tensor(1.5, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: gpuprim.topk(t, 1)[0], (scalar,))


def test_grad_matches_torch(device):
    x = torch.randn(7, 300, device=device, requires_grad=True)
    g = torch.randn(7, 20, device=device)
    (ours,) = torch.autograd.grad(gpuprim.topk(x, 20, 1)[0], x, g)
    (theirs,) = torch.autograd.grad(torch.topk(x, 20, 1)[0], x, g)
    assert torch.equal(ours, theirs)
    values, indices = gpuprim.topk(x, 3)
    assert values.requires_grad and not indices.requires_grad


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(x):
        values, indices = gpuprim.topk(x * 2, 5, 1)
        return values + 1, indices, gpuprim.topk(x, 2, 0, largest=False)[1]

    check_compiles(f, torch.randn(8, 300, device=device), dynamic=dynamic)
    check_compiles(f, torch.randn(5, 17, device=device), dynamic=dynamic)


def test_compile_inductor_with_backward(device):
    def step(x):
        values, _ = gpuprim.topk(x, 10, -1)
        return (values * torch.arange(10, device=x.device)).sum()

    check_compiled_backward(step, torch.randn(4, 100, device=device, requires_grad=True))


def test_bad_arguments(device):
    x = torch.randn(3, 4, device=device)
    with pytest.raises(IndexError, match=r"gpuprim.topk: dim must be in \[-2, 1\], got 2"):
        gpuprim.topk(x, 1, 2)
    with pytest.raises(ValueError, match=r"gpuprim.topk: k must be non-negative, got -1"):
        gpuprim.topk(x, -1)
    with pytest.raises(ValueError, match=r"gpuprim.topk: k must be at most the size of dim 1 \(4\), got 5"):
        gpuprim.topk(x, 5)
    with pytest.raises(TypeError, match="gpuprim.topk: self must be a floating-point or integer tensor, got Bool"):
        gpuprim.topk(torch.zeros(3, dtype=torch.bool, device=device), 1)
    with pytest.raises(TypeError, match="gpuprim.topk: self must be a floating-point or integer tensor"):
        gpuprim.topk(torch.zeros(3, dtype=torch.complex64, device=device), 1)


def test_cpp_api_matches():
    # The C++ API is a dispatcher call: torch.ops.gpuprim.topk is what it runs.
    x = torch.randn(4, 50)
    a = torch.ops.gpuprim.topk(x, 7)
    b = gpuprim.topk(x, 7)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


# ---------------------------------------------------------------- CUDA-only: every code path vs the CPU
def _random(shape, dtype, generator):
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype)
        flat = x.view(-1)
        if flat.numel() > 10:  # NaN, +-inf, +-0 and ties scattered through
            picks = torch.randint(0, flat.numel(), (max(1, flat.numel() // 50), 5), generator=generator)
            flat[picks[:, 0]] = float("nan")
            flat[picks[:, 1]] = float("inf")
            flat[picks[:, 2]] = -0.0
            flat[picks[:, 3]] = 0.0
            flat[picks[:, 4]] = 1.0
        return x
    info = torch.iinfo(dtype)
    low, high = max(info.min, -(2**40)), min(info.max, 2**40)
    return torch.randint(low, high, shape, generator=generator, dtype=torch.int64).to(dtype)


def _cuda_vs_cpu(x_cpu, k, dim, largest):
    cuda_values, cuda_indices = check_topk(x_cpu.cuda(), k, dim, largest)
    cpu_values, cpu_indices = gpuprim.topk(x_cpu, k, dim, largest)
    assert torch.equal(cuda_indices.cpu(), cpu_indices)
    assert_bitwise_equal(cuda_values.cpu(), cpu_values, "CUDA vs CPU values")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_cpu_every_path(dtype):
    g = torch.Generator().manual_seed(7)
    cases = [
        ((1000, 1), (1,)), ((1000, 32), (1, 8, 32)), ((700, 64), (2, 64)), ((300, 128), (1, 8, 64, 65, 128)),
        ((200, 256), (8, 64)), ((100, 512), (1, 64, 65, 512)),  # warp path, every tile; radix beyond k = 64
        ((50, 513), (1, 32, 513)), ((9, 10_000), (1, 31, 33, 512, 513, 1024, 1025, 2048, 2049, 10_000)),
        ((1, 300_001), (1, 100, 1024, 5000)), ((3, 70_001), (50,)),  # several blocks per row
        ((150, 20_000), (1, 64, 3000)),  # one block per row, long rows: candidates in shared memory
    ]
    for shape, ks in cases:
        x = _random(shape, dtype, g)
        for k in ks:
            for largest in (True, False):
                _cuda_vs_cpu(x, k, -1, largest)
    _cuda_vs_cpu(_random((40, 300, 7), dtype, g), 17, 1, True)  # dim in the middle


@pytest.mark.gpu
def test_cuda_ties_and_specials():
    g = torch.Generator().manual_seed(2)
    for n in (100, 600, 5000):
        few = torch.randint(0, 3, (33, n), generator=g).float()
        for k in (1, 33, 64, n // 2, n):
            for largest in (True, False):
                _cuda_vs_cpu(few, k, 1, largest)
    for fill in (float("nan"), float("-inf"), -0.0):
        for n in (100, 5000, 20_000):  # warp; one block (too many ties for shared memory); several blocks
            _cuda_vs_cpu(torch.full((5, n), fill), 40, 1, True)
            _cuda_vs_cpu(torch.full((5, n), fill), 40, 1, False)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16, torch.int8], ids=str)
def test_cuda_short_rows(dtype):
    """Rows of <= 512 (G lanes per row, 32-bit rank words): 4-byte keys give their low bits to the
    position, so rows whose best k + 1 share high key bits (equal values, low-bit neighbours, NaN,
    +-0) take the exact redo; every k kind of list (k in 1..16) and the boundary of rank k."""
    g = torch.Generator().manual_seed(11)
    for n in (64, 100, 128, 500):
        rows = [_random((67, n), dtype, g)]
        if dtype == torch.float32:
            neighbours = 1.0 + torch.randint(0, 200, (67, n), generator=g).double() * 2.0**-23  # low bits only
            mixed = torch.randn(67, n, generator=g)
            mixed[::3, 5] = mixed[::3, 9]  # a tie in some rows of a warp, none in the others
            rows += [neighbours.float(), mixed, torch.randn(67, n, generator=g)]
        rows.append(torch.randint(0, 3, (67, n), generator=g).to(dtype))  # many ties
        for x in rows:
            for k in (1, 2, 3, 7, 8, 9, 16, 17, 64):
                if k <= n:
                    for largest in (True, False):
                        _cuda_vs_cpu(x, k, 1, largest)


def _full_rows_with_specials(rows, n, generator):
    """fp32 [rows, n] of randn with, in every row, a NaN, a -NaN and a signalling NaN (other payloads), -0.0, +inf
    and -inf at random places."""
    x = torch.randn(rows, n, generator=generator)
    raw = x.view(torch.int32)
    picks = torch.randint(0, n, (rows, 6), generator=generator)
    at = torch.arange(rows)[:, None]
    x[at, picks[:, 0:1]] = float("nan")
    raw[at, picks[:, 1:2]] = 0xFFC00001 - (1 << 32)  # -NaN with a payload
    raw[at, picks[:, 2:3]] = 0x7F800001  # signalling NaN
    x[at, picks[:, 3:4]] = -0.0
    x[at, picks[:, 4:5]] = float("inf")
    x[at, picks[:, 5:6]] = float("-inf")
    return x


@pytest.mark.gpu
def test_cuda_full_rows_special_values():
    """fp32 rows of exactly G * 16 elements (32 ... 512) take the kernel without per-element masks (and on sm_90
    without a NaN select: its add gives every NaN one canonical bit pattern): NaN of any sign or payload ranks
    above +inf, -0.0 == +0.0 by index, CUDA == CPU bitwise (values keep their payloads)."""
    g = torch.Generator().manual_seed(5)
    for n in (32, 64, 128, 256, 512):
        x = _full_rows_with_specials(67, n, g)
        for k in (1, 2, 3, 8, 9, 16, 33, 64):
            if k <= n:
                for largest in (True, False):
                    _cuda_vs_cpu(x, k, 1, largest)


@pytest.mark.gpu
def test_cuda_radix_paths_with_ties():
    """One block per row: the first digit's bin fits in shared memory or not (constant rows, few values)."""
    g = torch.Generator().manual_seed(4)
    for x in (torch.full((100, 20_000), 1.5), torch.randint(0, 3, (100, 20_000), generator=g).float(),
              torch.randint(0, 1000, (100, 20_000), generator=g).to(torch.int16),
              torch.randn(100, 20_000, generator=g, dtype=torch.float64),
              torch.randn(100, 32_000, generator=g)):  # k = 1024: the second digit's bin goes to shared memory
        for k in (1, 33, 1024, 2049):
            for largest in (True, False):
                _cuda_vs_cpu(x, k, 1, largest)


@pytest.mark.gpu
def test_cuda_filter_path_hard_inputs():
    """The one-read threshold filter (16/32-bit keys, k <= 1024): inputs where every element beats
    the running threshold (ascending rows: a buffer compaction every tile), ties across chunk
    borders, rows that start off a 16-byte boundary, and enough chunks for several levels."""
    g = torch.Generator().manual_seed(9)
    ascending = torch.arange(60_000, dtype=torch.float32).repeat(3, 1)
    steps = torch.randint(0, 4, (2, 300_007), generator=g).to(torch.bfloat16)  # ties everywhere
    for x, ks in ((ascending, (1, 64, 1024)), (ascending.flip(1), (64, 1000)), (steps, (1, 50, 1024)),
                  (ascending.half(), (100,)), (ascending.int(), (512,))):
        for k in ks:
            for largest in (True, False):
                _cuda_vs_cpu(x, k, -1, largest)
    misaligned = torch.empty(5 * 33_335 + 1, device="cuda")[1:].view(5, 33_335)  # data_ptr % 16 == 4
    misaligned.copy_(torch.randn(5, 33_335, generator=g))
    assert misaligned.is_contiguous() and misaligned.data_ptr() % 16 != 0
    for k in (1, 7, 333):
        for largest in (True, False):
            values, indices = check_topk(misaligned, k, -1, largest)
            cpu_values, cpu_indices = gpuprim.topk(misaligned.cpu(), k, -1, largest)
            assert torch.equal(indices.cpu(), cpu_indices) and torch.equal(values.cpu(), cpu_values)
    one_row = torch.randn(1, 3_000_017, generator=g)  # level 0 chunks, then levels over candidates
    for k in (1, 100, 1024):
        _cuda_vs_cpu(one_row, k, -1, True)


def _long_rows_with_specials(rows, n, dtype, generator):
    """[rows, n] randn in fp32 or bf16 with, in every row, NaNs of both signs and several payloads (quiet and
    signalling), -0.0, +-inf and +-subnormals at random places, a few of each."""
    x = torch.randn(rows, n, generator=generator).to(dtype)
    int_type = torch.int32 if dtype == torch.float32 else torch.int16
    raw = x.view(int_type)
    patterns = ([0x7FC00000, 0xFFC00001, 0x7F800001, 0xFFFFFFFF, 0x80000000, 0x7F800000, 0xFF800000, 1, 0x80000001]
                if dtype == torch.float32 else
                [0x7FC0, 0xFFC1, 0x7F81, 0xFFFF, 0x8000, 0x7F80, 0xFF80, 1, 0x8001])
    bits = 8 * raw.element_size()
    picks = torch.randint(0, n, (rows, 3 * len(patterns)), generator=generator)
    at = torch.arange(rows)[:, None]
    for i, pattern in enumerate(patterns):
        signed = pattern - (1 << bits) if pattern >= 1 << (bits - 1) else pattern
        raw[at, picks[:, 3 * i:3 * i + 3]] = signed
    return x


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_cuda_filter_special_values(dtype):
    """The threshold filter encodes fp32 and bf16 keys with a float add (-0.0 -> +0.0; on sm_90 every NaN -> one
    canonical NaN, the largest key) instead of asking the codec per element: NaN of any sign or payload ranks above
    +inf, -0.0 == +0.0 by index, subnormals keep their order (no flush to zero), values keep their bits; on every
    filter path: a block per row, few rows in chunks (first-tile histogram bound), the pre-pass for one long row."""
    g = torch.Generator().manual_seed(13)
    for rows, n, ks in ((600, 5000, (1, 64, 300)), (9, 20_000, (1, 50, 1024)), (1, 300_001, (100, 1024))):
        x = _long_rows_with_specials(rows, n, dtype, g)
        for k in ks:
            for largest in (True, False):
                _cuda_vs_cpu(x, k, -1, largest)


@pytest.mark.gpu
def test_cuda_filter_few_rows_mixed_rows():
    """Few rows cut into chunks after the histogram pre-pass: rows whose bound admits few keys next to
    constant rows (every key admitted) in one launch, with ties at the k-th boundary spread over many
    chunks, and one row that takes every block of the GPU. The rows with few candidates are merged by ranking
    (rank_merge_kernel), the constant row by its last block after the levels: both in one call."""
    g = torch.Generator().manual_seed(12)
    n = 1_000_003
    x = torch.randn(5, n, generator=g)
    x[1] = 0.25  # constant
    x[2, ::700] = 10.0  # 1429 ties at the top
    x[3, ::300] = 10.0  # 3334 ties at the top
    x[4, ::500] = -10.0  # ties at the bottom (largest=False)
    for k in (1, 100, 1024):
        for largest in (True, False):
            _cuda_vs_cpu(x, k, -1, largest)
            _cuda_vs_cpu(x[2:3], k, -1, largest)


@pytest.mark.gpu
def test_cuda_filter_sampled_prepass():
    """The few-rows pre-pass counts a sample of each row (each chunk's first keys) and bounds the filter by the
    sample's k-th best bin: exact whatever the sample misses. Rows rising within every stretch (the sample holds
    each chunk's lowest keys), rising and falling over the whole row, ties at the k-th key, and a row whose best
    keys all sit at its end, outside any chunk's first keys. k from 64 to 1024 takes every sample stride (8 to 2)."""
    n = 1 << 20
    position = torch.arange(n)
    rising = position.float().view(1, n)
    saw = (position % 16_381).float().view(1, n)  # 64 or 65 ties at every value
    late = torch.zeros(1, n)
    late[0, -1024:] = torch.arange(1, 1025).float()
    for x in (rising, rising.flip(1), saw, late):
        for k in (64, 100, 256, 512, 1024):
            _cuda_vs_cpu(x, k, -1, True)
        _cuda_vs_cpu(x, 100, -1, False)


@pytest.mark.gpu
def test_cuda_large_against_torch():
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(64, 128_256, device="cuda", generator=g)
    y = torch.randn(1, 2**24, device="cuda", generator=g)
    uniform = torch.rand(1, 2**24, device="cuda", generator=g)  # many candidates kept: levels over candidates
    for t, k in ((x, 50), (x, 3000), (y, 1), (y, 100), (y, 1024), (uniform, 100), (uniform, 1024)):
        values, indices = gpuprim.topk(t, k)
        assert torch.equal(values, torch.topk(t, k).values)
        # Indices by the tie contract: a stable descending sort (torch's CUDA sort is stable).
        assert torch.equal(indices, torch.sort(t, dim=-1, descending=True, stable=True).indices[:, :k])


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    x = torch.randn(300, 5000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.topk(x, 50))
    check_no_sync_and_graph_capture(lambda: gpuprim.topk(x[:, :100], 8))  # warp path
    check_no_sync_and_graph_capture(lambda: gpuprim.topk(x, 3000))  # sorted after selection
    # Few rows: per-row counters zeroed on the stream, so each replay (two, outputs cleared before the second)
    # merges again: in the chunks' launch (no pre-pass; after the pre-pass) or in a level over candidates.
    few = torch.randn(2, 300_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.topk(few, 50), replays=2)
    one_row = torch.randn(1, 1 << 22, device="cuda")  # chunks * k > 8192: pre-pass, few candidates kept
    check_no_sync_and_graph_capture(lambda: gpuprim.topk(one_row, 100), replays=2)
    uniform = torch.rand(1, 1 << 22, device="cuda")  # the pre-pass bin holds 1/8 of the row: levels follow
    check_no_sync_and_graph_capture(lambda: gpuprim.topk(uniform, 100), replays=2)


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_elements():
    n = 2**31 + 4099
    x = torch.zeros(1, n, dtype=torch.int8, device="cuda")
    x[0, -5:] = torch.tensor([3, 1, 3, 2, 3], dtype=torch.int8, device="cuda")
    values, indices = gpuprim.topk(x, 4)
    assert values.tolist() == [[3, 3, 3, 2]]
    assert indices.tolist() == [[n - 5, n - 3, n - 1, n - 2]]
    values, indices = gpuprim.topk(x, 2, largest=False)
    assert values.tolist() == [[0, 0]] and indices.tolist() == [[0, 1]]
    del x
    y = torch.zeros(1, n, dtype=torch.float16, device="cuda")  # the filter path: positions past 2^31
    y[0, -3:] = torch.tensor([1.0, 2.0, 1.0], dtype=torch.float16, device="cuda")
    values, indices = gpuprim.topk(y, 3)
    assert values.tolist() == [[2.0, 1.0, 1.0]] and indices.tolist() == [[n - 2, n - 3, n - 1]]


def test_no_grad_fast_path(device):
    x = torch.randn(6, 70, dtype=torch.float64, device=device)
    check_no_grad_fast_path(lambda t: gpuprim.topk(t, 5, 1), x)
