"""gpuprim.moe_unpermute: weighted sum of each token's expert outputs back in token order."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import check_range, is_validating

if TYPE_CHECKING:
    from gpuprim.moe_route import Routing


@reports_input_errors
def moe_unpermute(expert_out: Tensor, routing: Routing, gates: Optional[Tensor] = None) -> Tensor:
    """[T, H]: ``out[t] = sum_j gates[t, j] * expert_out[routing.slots[t, j]]``.

    Args:
        expert_out: [R, H] fp16/bf16/fp32/fp64, R = routing.token_ids.size(0) (the permuted buffer's rows).
        routing: a :class:`gpuprim.Routing` (uses ``slots`` and ``token_ids``' length).
        gates: [T, k] weights (usually ``routing.gates``), read in fp32 (fp64 for fp64 expert_out);
            None: weight 1.

    Accumulates in fp32 (fp64 for fp64) with one rounded multiply and add per choice in the order
    j = 0..k-1; dropped choices (slot -1) add nothing. Bitwise deterministic, and equal between CPU and CUDA.
    Differentiable in expert_out (rows no pair maps to get 0) and gates (row dot products).
    """
    rows = routing.token_ids.size(0)
    if expert_out.dim() != 2 or expert_out.size(0) != rows:
        raise ValueError(f"gpuprim.moe_unpermute: expert_out must be 2-D with R = routing.token_ids.size(0) = {rows} "
                         f"rows, got shape {tuple(expert_out.shape)}")
    if is_validating():
        check_range("moe_unpermute", "slots", routing.slots, -1, rows, f"is out of range [-1, {rows})")
    return torch.ops.gpuprim.moe_unpermute.default(expert_out, routing.slots, gates)
