"""gpuprim.moe_permute: gathers token rows into the expert-ordered buffer of a Routing."""
from __future__ import annotations

import torch
from torch import Tensor


def moe_permute(hidden: Tensor, routing) -> Tensor:
    """[R, H]: row r is ``hidden[routing.token_ids[r]]``; padding rows (token id -1) are zero.

    Args:
        hidden: [T, H] fp16/bf16/fp32/fp64 token states (T = routing.slots.size(0)).
        routing: a :class:`gpuprim.Routing` (uses ``token_ids`` and ``slots``).

    Differentiable in hidden: the backward sums each token's k rows in the fixed order j = 0..k-1 in fp32
    (dropped choices add nothing) — bitwise deterministic. 16-byte vectorized row copies, 64-bit indexing,
    no host sync.
    """
    return torch.ops.gpuprim.moe_permute.default(hidden, routing.token_ids, routing.slots)
