"""gpuprim.moe_permute: gathers token rows into the expert-ordered buffer of a Routing."""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import check_range, is_validating

if TYPE_CHECKING:
    from gpuprim.moe_route import Routing


@reports_input_errors
def moe_permute(hidden: Tensor, routing: Routing) -> Tensor:
    """[R, H]: row r is ``hidden[routing.token_ids[r]]``; padding rows (token id -1) are zero.

    Args:
        hidden: [T, H] fp16/bf16/fp32/fp64 token states (T = routing.slots.size(0)).
        routing: a :class:`gpuprim.Routing` (uses ``token_ids`` and ``slots``).

    Differentiable in hidden: the backward sums each token's k rows in the fixed order j = 0..k-1 in fp32
    (dropped choices add nothing) — bitwise deterministic. 16-byte vectorized row copies, 64-bit indexing,
    no host sync.
    """
    if is_validating():
        check_range("moe_permute", "token_ids", routing.token_ids, -1, hidden.size(0),
                    f"is out of range [-1, {hidden.size(0)})")
    return torch.ops.gpuprim.moe_permute.default(hidden, routing.token_ids, routing.slots)
