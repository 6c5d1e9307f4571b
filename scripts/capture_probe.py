"""Is a capture failure under compute-sanitizer gpuprim's or torch's? The capture pattern of
test_moe_route.py::test_cuda_no_sync_and_graph_capture with torch ops only (no gpuprim): leaves made on the
default stream, torch.autograd.grad inside torch.cuda.graph capture.

    compute-sanitizer --tool memcheck python scripts/capture_probe.py   # fails the same way as the test
    python scripts/capture_probe.py                                     # passes
"""
import sys

sys.path.insert(0, "tests")
import torch  # noqa: E402

from op_checks import check_no_sync_and_graph_capture  # noqa: E402

gates = torch.rand(4096, 8, device="cuda").requires_grad_()
hidden = torch.randn(4096 * 8, 256, device="cuda", dtype=torch.bfloat16, requires_grad=True)
index = torch.randperm(4096 * 8, device="cuda")  # no repeats: an exact backward


def run():
    permuted = hidden.index_select(0, index)
    out = (permuted.view(4096, 8, 256).float() * gates.unsqueeze(-1)).sum(1)
    grad_hidden, grad_gates = torch.autograd.grad(out.square().sum(), [hidden, gates])
    return permuted.detach(), out.detach(), grad_hidden, grad_gates


check_no_sync_and_graph_capture(run)
print("pure torch: capture of an autograd.grad backward ok")
