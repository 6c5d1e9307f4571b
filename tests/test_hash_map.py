"""gpuprim.HashMap and gpuprim.IdRemapper against a Python dict, on CPU and CUDA.

Contents are compared through find / contains (the slots a key takes may differ on CUDA); values exactly.
"""
import io

import pytest
import torch

import gpuprim
from op_checks import (
    assert_bitwise_equal,
    check_compiles,
    check_no_sync_and_graph_capture,
    run_example,
    run_opcheck,
)

KEY_DTYPES = (torch.int32, torch.int64)
VALUE_DTYPES = (torch.int32, torch.int64, torch.float32, torch.float64)


def dict_of(keys, values):
    """Insert-or-assign with the lowest position winning among equal keys of one call."""
    d = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        d.setdefault(k, v)
    return d


def check_against(table, reference, queries, default=-7):
    found = table.find(queries, default)
    contains = table.contains(queries)
    want = [reference.get(q, default) for q in queries.tolist()]
    assert found.dtype == table.values.dtype and found.shape == queries.shape
    assert torch.equal(found.cpu(), torch.tensor(want, dtype=found.dtype).reshape(queries.shape))
    assert contains.tolist() == [q in reference for q in queries.reshape(-1).tolist()] or contains.dim() > 1
    assert int(table.size()) == len(reference)


def key_samples(dtype, device):
    g = torch.Generator().manual_seed(7)
    info = torch.iinfo(dtype)
    yield torch.zeros(0, dtype=dtype)
    yield torch.tensor([5], dtype=dtype)
    yield torch.full((300,), 9, dtype=dtype)  # all equal: the first value wins
    yield torch.randperm(5000, generator=g).to(dtype) * 7 - 10_000  # all distinct
    yield torch.randint(-100, 100, (4097,), generator=g).to(dtype)  # many duplicates
    yield torch.tensor([info.min, info.max, info.min + 1, info.max - 1, 0, info.min, -1], dtype=dtype)  # limits


@pytest.mark.parametrize("key_dtype", KEY_DTYPES, ids=str)
@pytest.mark.parametrize("value_dtype", VALUE_DTYPES, ids=str)
def test_build_find_contains(device, key_dtype, value_dtype):
    for keys in key_samples(key_dtype, device):
        values = (torch.arange(keys.numel()) * 3 + 1).to(value_dtype)
        if value_dtype.is_floating_point:
            values = values / 4
        table = gpuprim.HashMap.build(keys.to(device), values.to(device), load_factor=0.7)
        reference = dict_of(keys, values)
        info = torch.iinfo(key_dtype)
        queries = torch.cat([keys, torch.tensor([info.min, info.max, 123457, -3], dtype=key_dtype)])
        check_against(table, reference, queries.to(device))


@pytest.mark.parametrize("key_dtype", KEY_DTYPES, ids=str)
def test_insert_or_assign_lowest_position_wins(device, key_dtype):
    table = gpuprim.HashMap.empty(64, key_dtype, torch.int64, device)
    reference = {}
    g = torch.Generator().manual_seed(3)
    for step in range(5):
        keys = torch.randint(-20, 20, (40,), generator=g).to(key_dtype)
        if step == 2:
            keys[::7] = torch.iinfo(key_dtype).min  # the free-slot marker as a real key, several times
        values = torch.randint(0, 1000, (40,), generator=g)
        table.insert(keys.to(device), values.to(device))
        reference.update(dict_of(keys, values))
        check_against(table, reference, torch.arange(-25, 25).to(key_dtype).to(device))
    check_against(table, reference, torch.tensor([torch.iinfo(key_dtype).min], dtype=key_dtype).to(device))


def test_sentinel_key_alone(device):
    table = gpuprim.HashMap.empty(4, torch.int64, torch.float32, device)
    low = torch.iinfo(torch.int64).min
    assert not table.contains(torch.tensor([low], device=device)).item()
    table.insert(torch.tensor([low, low], device=device), torch.tensor([2.5, 3.5], device=device))
    assert table.find(torch.tensor([low, 0], device=device), -1.0).tolist() == [2.5, -1.0]
    assert int(table.size()) == 1


def test_multidim_queries_and_default(device):
    table = gpuprim.HashMap.build(torch.tensor([1, 2, 3], device=device), torch.tensor([10, 20, 30], device=device))
    q = torch.tensor([[1, 4], [3, 2]], device=device)
    assert table.find(q, -1).tolist() == [[10, -1], [30, 20]]
    assert table.contains(q).tolist() == [[True, False], [True, True]]


def test_default_must_fit_the_value_dtype(device):
    table = gpuprim.HashMap.build(torch.tensor([1, 2], device=device), torch.tensor([10, 20], dtype=torch.int32,
                                                                                    device=device))
    with pytest.raises(ValueError, match=r"gpuprim\.hash_map_find: default_value must be representable in the "
                                         r"table's value dtype Int, got 1099511627776"):
        table.find(torch.tensor([3], device=device), default=2**40)
    assert table.find(torch.tensor([3, 1], device=device), default=-(2**31)).tolist() == [-(2**31), 10]


def test_full_table_is_an_error_not_a_hang(device):
    table = gpuprim.HashMap.empty(8, torch.int32, torch.int32, device)
    keys = torch.arange(10, dtype=torch.int32, device=device)
    if device == "cpu":
        with pytest.raises(ValueError, match=r"HashMap.insert: keys\[8\] = 8 does not fit: .*capacity 8\) is full"):
            table.insert(keys, keys)
    else:
        table.insert(keys, keys)
        with pytest.raises(gpuprim.InputError, match=r"does not fit: .*capacity 8\) is full"):
            gpuprim.check_errors()
        with gpuprim.validate():
            with pytest.raises(gpuprim.InputError, match="is full"):
                gpuprim.HashMap.empty(2, torch.int32, torch.int32, device).insert(keys, keys)
    assert int(table.size()) == 8  # every slot is taken, and the probes stopped
    found = table.find(keys, -1).tolist()
    # CPU: keys in position order, so 0..7; CUDA: any 8 of the 10 (which ones fit depends on timing).
    assert sum(v == k for k, v in enumerate(found)) == 8 and all(v in (k, -1) for k, v in enumerate(found))
    if device == "cpu":
        assert found[:8] == list(range(8))


def test_bad_arguments(device):
    keys = torch.tensor([1, 2], device=device)
    with pytest.raises(ValueError, match=r"load_factor must be in \(0, 1\), got 1.5"):
        gpuprim.HashMap.build(keys, keys, load_factor=1.5)
    with pytest.raises(ValueError, match=r"load_factor must be in \(0, 1\), got 0"):
        gpuprim.HashMap.build(keys, keys, load_factor=0)
    table = gpuprim.HashMap.build(keys, keys)
    with pytest.raises(TypeError, match="gpuprim.hash_map_find: queries must be the table's key dtype Long, got Int"):
        table.find(keys.int())
    with pytest.raises(TypeError, match="gpuprim.hash_map_insert_: keys must be the table's key dtype Long, got Int"):
        table.insert(keys.int(), keys)
    with pytest.raises(TypeError, match="gpuprim.hash_map_insert_: values must be the table's value dtype Long"):
        table.insert(keys, keys.float())
    with pytest.raises(ValueError, match="gpuprim.hash_map_insert_: values must be of the keys' shape"):
        table.insert(keys, keys[:1])
    with pytest.raises(TypeError, match="key_dtype must be torch.int32 or torch.int64"):
        gpuprim.HashMap.empty(4, torch.int16)
    # Keys and values neither contiguous nor interleaved as HashMap.empty makes them: named, with the strides.
    slots = torch.zeros(9, 3, dtype=torch.int64, device=device)
    with pytest.raises(ValueError, match=r"the table's keys and values must be two contiguous tensors, or interleaved "
                                         r"in 16-byte slots .* got strides \[3\] and \[3\], offsets 0 and 1"):
        torch.ops.gpuprim.hash_map_find(slots[:8, 0], slots[:, 1], torch.zeros(2, dtype=torch.int64, device=device),
                                        keys)


@pytest.mark.parametrize("key_dtype", KEY_DTYPES, ids=str)
@pytest.mark.parametrize("value_dtype", VALUE_DTYPES, ids=str)
def test_layouts(device, key_dtype, value_dtype):
    """empty() interleaves keys and values of one dtype (strided views of one buffer) and keeps others apart; a
    table of two contiguous tensors (the other layout) holds the same contents."""
    table = gpuprim.HashMap.empty(50, key_dtype, value_dtype, device)
    interleaved = key_dtype == value_dtype
    assert table.keys.stride() == ((2,) if interleaved else (1,))
    assert table.values.stride() == ((2,) if interleaved else (1,)) and table.values.numel() == 51
    apart = gpuprim.HashMap(table.keys.clone(), table.values.clone(), table.state.clone())
    keys = torch.tensor([5, -3, torch.iinfo(key_dtype).min, 5, 40], dtype=key_dtype, device=device)
    values = torch.arange(5, device=device).to(value_dtype)
    for t in (table, apart):
        t.insert(keys, values)
    q = torch.tensor([5, -3, torch.iinfo(key_dtype).min, 40, 7], dtype=key_dtype, device=device)
    assert table.find(q, -1).tolist() == apart.find(q, -1).tolist() == values.new_tensor([0, 1, 2, 4, -1]).tolist()
    assert table.to("cpu").find(q.cpu(), -1).tolist() == [0, 1, 2, 4, -1]


def test_opcheck(device):
    table = gpuprim.HashMap.build(torch.tensor([3, 1, 4, 1, 5], device=device), torch.arange(5.0, device=device))
    queries = torch.tensor([1, 2, 3, 9], device=device)
    run_opcheck(torch.ops.gpuprim.hash_map_find.default, (table.keys, table.values, table.state, queries, -1.0))
    run_opcheck(torch.ops.gpuprim.hash_map_contains.default, (table.keys, table.values, table.state, queries))
    run_opcheck(torch.ops.gpuprim.hash_map_insert_.default,
                (table.keys.clone(), table.values.clone(), table.state.clone(), queries, torch.ones(4, device=device)))


def test_save_load_and_to(device):
    table = gpuprim.HashMap.build(torch.tensor([3, 1, 4], device=device), torch.tensor([30, 10, 40], device=device))
    buffer = io.BytesIO()
    torch.save(table, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    q = torch.tensor([1, 2, 3, 4], device=device)
    assert loaded.find(q, 0).tolist() == [10, 0, 30, 40]
    assert table.to("cpu").find(q.cpu(), 0).tolist() == [10, 0, 30, 40]


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile(device, dynamic):
    table = gpuprim.HashMap.build(torch.arange(100, device=device) * 3, torch.arange(100, device=device))

    def f(q):
        return table.find(q * 3, -1) + 1, table.contains(q)

    check_compiles(f, torch.arange(-5, 120, device=device), dynamic=dynamic)

    def g(keys, values, state, q):
        t = gpuprim.HashMap(keys, values, state)
        t.insert(q, q)
        return t.find(q + 1, -1)

    fresh = gpuprim.HashMap.empty(256, device=device)
    q = torch.arange(50, device=device)
    torch._dynamo.reset()
    out = torch.compile(g, fullgraph=True, backend="aot_eager")(fresh.keys, fresh.values, fresh.state, q)
    assert out.tolist() == list(range(1, 50)) + [-1]
    assert int(fresh.size()) == 50  # the in-place insert reached the caller's tensors


def test_deterministic_contents(device):
    g = torch.Generator().manual_seed(1)
    keys = torch.randint(0, 3000, (20_000,), generator=g).to(device)
    values = torch.arange(20_000, device=device)
    first = gpuprim.HashMap.build(keys, values, load_factor=0.9)
    q = torch.arange(-1, 3001, device=device)
    for _ in range(3):
        again = gpuprim.HashMap.build(keys, values, load_factor=0.9)
        assert torch.equal(again.find(q, -1), first.find(q, -1))


def test_id_remapper(device):
    remap = gpuprim.IdRemapper(64, device=device)
    ids = torch.tensor([[900, 5, 900], [-3, 5, 2**40]], device=device)
    assert remap(ids).tolist() == [[0, 1, 0], [2, 1, 3]]
    assert int(remap.num_rows()) == 4
    assert remap(torch.tensor([7, 5, 7, 8, -3], device=device)).tolist() == [4, 1, 4, 5, 2]
    assert remap.lookup(torch.tensor([8, 11], device=device)).tolist() == [5, -1]
    assert remap(torch.zeros(0, dtype=torch.int64, device=device)).shape == (0,)


def test_id_remapper_matches_dict(device):
    g = torch.Generator().manual_seed(9)
    remap = gpuprim.IdRemapper(4096, device=device)
    rows = {}
    for _ in range(4):
        ids = torch.randint(-(2**62), 2**62, (64,), generator=g)
        ids = ids[torch.randint(0, 64, (500,), generator=g)]
        for i in ids.tolist():
            rows.setdefault(i, len(rows))
        assert remap(ids.to(device)).tolist() == [rows[i] for i in ids.tolist()]


@pytest.mark.gpu
@pytest.mark.parametrize("key_dtype", KEY_DTYPES, ids=str)
@pytest.mark.parametrize("value_dtype", VALUE_DTYPES, ids=str)
def test_cuda_matches_cpu(key_dtype, value_dtype):
    g = torch.Generator().manual_seed(4)
    keys = torch.randint(-5000, 5000, (30_000,), generator=g).to(key_dtype)
    values = torch.randint(-99, 99, (30_000,), generator=g).to(value_dtype)
    cpu = gpuprim.HashMap.build(keys, values, load_factor=0.8)
    cuda = gpuprim.HashMap.build(keys.cuda(), values.cuda(), load_factor=0.8)
    q = torch.arange(-5100, 5100).to(key_dtype)
    assert_bitwise_equal(cpu.find(q, 3), cuda.find(q.cuda(), 3).cpu(), "find")
    assert torch.equal(cpu.contains(q), cuda.contains(q.cuda()).cpu())
    assert torch.equal(cpu.state, cuda.state.cpu())


@pytest.mark.gpu
def test_cuda_matches_cpu_several_keys_a_thread():
    """More keys than the claim pass has threads (a few waves of resident blocks), many repeated: the per-block
    count of new keys gives the size, the lowest position wins, as on the CPU."""
    g = torch.Generator().manual_seed(5)
    n = 6 << 20
    keys = torch.randint(-(4 << 20), 4 << 20, (n,), generator=g, dtype=torch.int32)
    values = torch.arange(n, dtype=torch.int32)
    cpu = gpuprim.HashMap.build(keys, values, load_factor=0.6)
    cuda = gpuprim.HashMap.build(keys.cuda(), values.cuda(), load_factor=0.6)
    assert torch.equal(cpu.state, cuda.state.cpu())
    q = torch.randint(-(4 << 20) - 10, (4 << 20) + 10, (1 << 20,), generator=g, dtype=torch.int32)
    assert_bitwise_equal(cpu.find(q, -1), cuda.find(q.cuda(), -1).cpu(), "find")


@pytest.mark.gpu
def test_cuda_matches_cpu_distinct_then_updates():
    """A build of distinct keys (each claimer writes its own value, no bids), then an insert of stored keys and
    new ones, none repeated within the call (every stored key met turns the bids on), as on the CPU."""
    g = torch.Generator().manual_seed(6)
    n = 3 << 20
    keys = (torch.randperm(4 * n, generator=g)[:n] - 2 * n).to(torch.int64)
    values = torch.randn(n, generator=g, dtype=torch.float64)
    cpu = gpuprim.HashMap.build(keys, values, load_factor=0.8)
    cuda = gpuprim.HashMap.build(keys.cuda(), values.cuda(), load_factor=0.8)
    assert torch.equal(cpu.state, cuda.state.cpu())
    q = torch.randint(-2 * n - 10, 2 * n + 10, (1 << 20,), generator=g)
    assert_bitwise_equal(cpu.find(q, -1.0), cuda.find(q.cuda(), -1.0).cpu(), "find after the build")
    update = torch.cat([keys[: n // 4], torch.arange(2 * n, 2 * n + 1000)])[torch.randperm(n // 4 + 1000, generator=g)]
    new_values = -torch.arange(update.numel(), dtype=torch.float64)
    cpu.insert(update, new_values)
    cuda.insert(update.cuda(), new_values.cuda())
    assert torch.equal(cpu.state, cuda.state.cpu())
    q = torch.cat([q, update[:1000]])
    assert_bitwise_equal(cpu.find(q, -1.0), cuda.find(q.cuda(), -1.0).cpu(), "find after the update")


@pytest.mark.gpu
@pytest.mark.parametrize("key_dtype", KEY_DTYPES, ids=str)
@pytest.mark.parametrize("interleaved", [True, False], ids=["interleaved", "apart"])
def test_cuda_probes_across_sectors_and_the_wrap(key_dtype, interleaved):
    """Half-full, nearly full and full tables of odd capacities: probes run over several sectors and wrap past
    the last slot, and a full table's misses probe every slot. The apart layout's keys start one element into
    their buffer, so sectors cut the slots at other places. Contents and misses as on the CPU."""
    g = torch.Generator().manual_seed(8)
    value_dtype = key_dtype if interleaved else torch.float64
    for capacity in (1, 3, 13, 61, 1000, 4099):
        for fill in sorted({max(capacity // 2, 1), max(capacity - 1, 1), capacity}):
            keys = (torch.randperm(4 * capacity, generator=g)[:fill] * 3 - capacity).to(key_dtype)
            values = torch.randint(-99, 99, (fill,), generator=g).to(value_dtype)
            cpu = gpuprim.HashMap.empty(capacity, key_dtype, value_dtype, "cpu")
            cuda = gpuprim.HashMap.empty(capacity, key_dtype, value_dtype, "cuda")
            if not interleaved:
                buffer = torch.full((capacity + 1,), torch.iinfo(key_dtype).min, dtype=key_dtype, device="cuda")
                cuda = gpuprim.HashMap(buffer[1:], cuda.values, cuda.state)
            for table in (cpu, cuda):
                table.insert(keys.to(table.keys.device), values.to(table.keys.device))
                # stored keys again, half of them with new values: the probes of keys already in the table
                table.insert(keys[::2].to(table.keys.device), -values[::2].to(table.keys.device))
            assert torch.equal(cpu.state, cuda.state.cpu()), (capacity, fill)
            queries = torch.cat([keys, keys + 1, keys - 1])  # stored, and mostly absent
            assert_bitwise_equal(cpu.find(queries, 7), cuda.find(queries.cuda(), 7).cpu(), f"find {capacity}/{fill}")
            assert torch.equal(cpu.contains(queries), cuda.contains(queries.cuda()).cpu())


@pytest.mark.gpu
def test_no_sync_and_graph_capture():
    table = gpuprim.HashMap.empty(1 << 16, torch.int32, torch.int32, "cuda")
    keys = torch.randint(0, 1 << 20, (20_000,), device="cuda", dtype=torch.int32)
    check_no_sync_and_graph_capture(lambda: table.insert(keys, keys))
    check_no_sync_and_graph_capture(lambda: table.find(keys, -1))
    check_no_sync_and_graph_capture(lambda: table.contains(keys))
    remap = gpuprim.IdRemapper(1 << 16, device="cuda")
    ids = torch.randint(0, 1 << 40, (4096,), device="cuda")
    check_no_sync_and_graph_capture(lambda: remap(ids))


@pytest.mark.gpu
@pytest.mark.slow
def test_more_than_2pow31_queries():
    table = gpuprim.HashMap.build(torch.arange(1000, device="cuda", dtype=torch.int32),
                                  torch.arange(1000, device="cuda", dtype=torch.int32))
    q = torch.zeros(2**31 + 5, dtype=torch.int32, device="cuda")
    q[-1] = 999
    q[-2] = 5000
    out = table.find(q, -1)
    assert int(out[0]) == 0 and int(out[-1]) == 999 and int(out[-2]) == -1


def test_id_remap_embedding_bag_example(device):
    """examples/id_remap_embedding_bag.py: raw ids remapped to dense rows on the device feed gpuprim.nn.EmbeddingBag
    for a few training steps (the example asserts its lookups agree and unseen ids map to -1)."""
    output = run_example("id_remap_embedding_bag.py", "--device", device)
    assert "an unseen id: [-1]" in output
