"""gpuprim.distributed: expert-parallel MoE dispatch and combine on torch.distributed (NCCL on GPUs, gloo on CPUs).

Each rank routes its own tokens with :func:`gpuprim.moe_route` over all E experts; :func:`dispatch` exchanges
the per-expert counts on the device (all_to_all_single of the count tensor) and sends every routed row to the
rank owning its expert (expert e on rank e // num_local_experts), grouped there by local expert for a grouped
GEMM; :func:`combine` sends the expert outputs back and sums each token's k outputs with its gates in the fixed
order j = 0..k-1. Fixed capacity per (rank, expert): no host sync, CUDA-graph capturable. Dropless: one host
sync per dispatch (the split sizes). See docs/expert_parallel.md.
"""
from gpuprim.distributed._dispatch import ExpertHandle, combine, dispatch

__all__ = ["ExpertHandle", "combine", "dispatch"]
