"""gpuprim.sort_pairs against gpuprim.sort / torch.sort plus a gather, on CPU and CUDA.

A stable sort has one answer: keys are compared bitwise, values exactly (they are moved, never
computed). The CUDA direct path (int32/int64 keys, 4/8-byte value rows, ascending) and the generic
path (everything else) are both covered.
"""
import pytest
import torch
from test_sort import reference_sort

import gpuprim
from op_checks import assert_bitwise_equal, check_compiles, check_no_sync_and_graph_capture, run_opcheck
from samples import FLOAT_DTYPES, INT_DTYPES, value_samples

VALUE_DTYPES = (torch.int32, torch.int64, torch.float32, torch.float64, torch.int16, torch.bfloat16, torch.uint8)


def reference_sort_pairs(keys, values, descending):
    sorted_keys, order = reference_sort(keys, 0, descending)
    return sorted_keys, values.index_select(0, order)


def check_pairs(keys, values, descending=False, end_bit=None):
    got_keys, got_values = gpuprim.sort_pairs(keys, values, descending=descending, end_bit=end_bit)
    want_keys, want_values = reference_sort_pairs(keys, values, descending)
    assert got_keys.dtype == keys.dtype and got_values.dtype == values.dtype
    assert got_values.shape == values.shape
    assert_bitwise_equal(got_keys, want_keys, "keys")
    assert_bitwise_equal(got_values, want_values, "values")


@pytest.mark.parametrize("key_dtype", FLOAT_DTYPES + INT_DTYPES + (torch.bool,))
@pytest.mark.parametrize("descending", [False, True])
def test_matches_reference(device, key_dtype, descending):
    for sample in value_samples(device, key_dtype):
        keys = sample.x.flatten()
        values = torch.arange(keys.numel(), device=device, dtype=torch.int32)
        check_pairs(keys, values, descending)


@pytest.mark.parametrize("value_dtype", VALUE_DTYPES)
@pytest.mark.parametrize("key_dtype", [torch.int32, torch.int64])
def test_value_dtypes_and_rows(device, key_dtype, value_dtype):
    g = torch.Generator().manual_seed(7)
    keys = torch.randint(-50, 50, (5001,), generator=g).to(device, key_dtype)  # many ties: stability shows
    for shape in [(5001,), (5001, 2), (5001, 3)]:
        values = torch.randint(-100, 100, shape, generator=g).to(device, value_dtype)
        check_pairs(keys, values)
    check_pairs(keys, torch.randn(5001, 1, generator=g).to(device).t().contiguous().t())  # non-contiguous is fine


@pytest.mark.parametrize("key_dtype", [torch.uint8, torch.int16, torch.int32, torch.int64])
def test_end_bit(device, key_dtype):
    g = torch.Generator().manual_seed(3)
    for end_bit in (1, 5, 7):
        keys = torch.randint(0, 1 << end_bit, (20001,), generator=g).to(device, key_dtype)
        values = torch.arange(keys.numel(), device=device)
        check_pairs(keys, values, end_bit=end_bit)


def test_end_bit_validate(device):
    keys = torch.tensor([1, 300, 2], device=device)
    with gpuprim.validate():
        with pytest.raises(ValueError, match="end_bit"):
            gpuprim.sort_pairs(keys, keys, end_bit=8)
    # Outside validate mode: a permutation of the same pairs, no error.
    out_keys, out_values = gpuprim.sort_pairs(keys, keys, end_bit=8)
    assert torch.equal(out_keys, out_values) and torch.equal(out_keys.sort().values, keys.sort().values)


def test_empty_and_one(device):
    for n in (0, 1):
        keys = torch.arange(n, device=device, dtype=torch.int32)
        check_pairs(keys, torch.arange(n, device=device, dtype=torch.float32))


def test_opcheck(device):
    g = torch.Generator().manual_seed(1)
    keys = torch.randint(0, 9, (300,), generator=g).to(device)
    for values in (torch.randn(300, generator=g).to(device), torch.randint(0, 5, (300, 3), generator=g).to(device)):
        run_opcheck(torch.ops.gpuprim.sort_pairs.default, (keys, values), {"descending": False, "end_bit": None})
        run_opcheck(torch.ops.gpuprim.sort_pairs.default, (keys.int(), values), {"descending": True, "end_bit": 4})
    run_opcheck(torch.ops.gpuprim.sort_pairs.default, (torch.randn(77, generator=g).to(device), keys[:77]),
                {"descending": False, "end_bit": None})


def test_not_differentiable(device):
    values = torch.randn(10, device=device, requires_grad=True)
    keys, out = gpuprim.sort_pairs(torch.arange(10, device=device), values)
    with pytest.raises(RuntimeError):
        out.sum().backward()


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    def f(keys, values):
        k, v = gpuprim.sort_pairs(keys, values)
        return k, v * 2

    g = torch.Generator().manual_seed(2)
    check_compiles(f, torch.randint(0, 100, (1000,), generator=g).to(device), torch.randn(1000, generator=g).to(device),
                   dynamic=dynamic)


def test_bad_arguments(device):
    keys = torch.arange(10, device=device)
    with pytest.raises(ValueError, match="keys must be 1-D"):
        gpuprim.sort_pairs(keys.view(2, 5), keys)
    with pytest.raises(ValueError, match="values must be a tensor whose first dim"):
        gpuprim.sort_pairs(keys, keys[:9])
    with pytest.raises(ValueError, match=r"end_bit must be in \[1, 64\]"):
        gpuprim.sort_pairs(keys, keys, end_bit=65)
    with pytest.raises(ValueError, match="end_bit must be None"):
        gpuprim.sort_pairs(keys.float(), keys, end_bit=8)
    with pytest.raises(TypeError, match="keys must be"):
        gpuprim.sort_pairs(keys.to(torch.complex64), keys)


@pytest.mark.gpu
@pytest.mark.parametrize("key_dtype", [torch.int32, torch.int64])
def test_cuda_matches_cpu_large(key_dtype):
    g = torch.Generator().manual_seed(11)
    keys = torch.randint(-(1 << 30), 1 << 30, (3_000_017,), generator=g).to(key_dtype)
    keys[::7] = 5  # a long run of ties
    values = torch.randint(0, 1 << 30, (3_000_017,), generator=g)
    cuda_keys, cuda_values = gpuprim.sort_pairs(keys.cuda(), values.cuda())
    cpu_keys, cpu_values = gpuprim.sort_pairs(keys, values)
    assert torch.equal(cuda_keys.cpu(), cpu_keys) and torch.equal(cuda_values.cpu(), cpu_values)
    cuda_keys, cuda_values = gpuprim.sort_pairs(keys.cuda().abs(), values.cuda(), end_bit=31)
    cpu_keys, cpu_values = gpuprim.sort_pairs(keys.abs(), values)
    assert torch.equal(cuda_keys.cpu(), cpu_keys) and torch.equal(cuda_values.cpu(), cpu_values)


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    keys = torch.randint(0, 1000, (100_000,), device="cuda", dtype=torch.int32)
    values = torch.randn(100_000, device="cuda")
    check_no_sync_and_graph_capture(lambda: gpuprim.sort_pairs(keys, values))
    check_no_sync_and_graph_capture(lambda: gpuprim.sort_pairs(keys.float(), values, descending=True))
