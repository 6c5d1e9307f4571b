"""gpuprim.topk with k > 2048 on CUDA: the radix select leaves each row in selection order and the launcher puts it
in final order with the prim row sort (test_topk.py holds the other paths and the reference)."""
import pytest
import torch
from test_topk import _cuda_vs_cpu, _random


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.uint8], ids=str)
def test_cuda_large_k_final_order(dtype):
    """k > 2048: the radix select (one block per row, or several for few long rows) leaves each row in selection
    order and the launcher puts it in final order with the prim row sort; ties must stay in index order, NaN
    (any sign or payload) rank above +inf, -0.0 == +0.0, values keep their bits. Rows of few distinct values put
    thousands of ties at the k-th boundary; 8-byte keys take the composite-free row sorts."""
    g = torch.Generator().manual_seed(21)
    for rows, n, ks in ((6, 9_000, (2049, 4096, 9_000)), (1, 70_001, (2049, 30_000)), (2, 40_000, (5000,))):
        if dtype.is_floating_point:
            x = torch.randn(rows, n, generator=g).to(dtype)
            few = torch.randint(-2, 3, (rows, n), generator=g).to(dtype)
            few[:, ::97] = -0.0
            few[:, 5::131] = float("nan")
            if dtype != torch.float16:  # a NaN of the other sign, and +-inf
                few.view({4: torch.int32, 8: torch.int64}[few.element_size()])[:, 7::151] = -1
                few[:, 3::173] = float("inf")
                few[:, 11::179] = float("-inf")
        else:
            x = _random((rows, n), dtype, g)
            few = torch.randint(0, 4, (rows, n), generator=g).to(dtype)
        for data in (x, few):
            for k in ks:
                for largest in (True, False):
                    _cuda_vs_cpu(data, k, -1, largest)
