"""gpuprim.moe_route: top-k MoE token routing into a padded, expert-ordered buffer, sync-free."""
from __future__ import annotations

from typing import NamedTuple, Optional

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import check_range, is_validating


class Routing(NamedTuple):
    """Where every (token, choice) pair goes in the permuted buffer. All int64 except ``gates`` (fp32).

    expert_ids [T, k] chosen experts (descending score, ties to the lower expert index); gates [T, k]
    (differentiable w.r.t. the logits); counts [E] pairs kept per expert; offsets [E + 1] first row of each
    expert's block (blocks padded to a multiple of pad_to; offsets[E] = rows in use); slots [T, k] row of each
    pair, -1 where dropped; token_ids [R] source token of each row, -1 on padding rows; num_dropped [1].
    """

    expert_ids: Tensor
    gates: Tensor
    counts: Tensor
    offsets: Tensor
    slots: Tensor
    token_ids: Tensor
    num_dropped: Tensor


_moe_route = torch.ops.gpuprim.moe_route.default


@reports_input_errors
def moe_route(logits: Tensor, k: int, *, score: str = "softmax", renormalize: bool = True,
              capacity: Optional[int] = None, pad_to: int = 1, drop: str = "position") -> Routing:
    """Routes T tokens to their top-k of E experts and lays them out expert by expert.

    Args:
        logits: [T, E] router logits (float32, float16 or bfloat16).
        k: experts per token, 1 <= k <= E.
        score: ``"softmax"`` or ``"sigmoid"`` scores (see ``torch.ops.gpuprim.topk_gating``).
        renormalize: divide each token's k gates by their sum.
        capacity: at most this many pairs per expert (>= 0), the others are dropped (slot -1); None: no limit.
        pad_to: each expert's block of rows is padded up to a multiple of this (grouped-GEMM tiles), >= 1.
        drop: with a capacity, ``"position"`` keeps each expert's earliest tokens, ``"score"`` its highest
            gates (ties to the lower token index).

    Returns:
        :class:`Routing`. The number of permuted rows R is fixed by the arguments — T*k + E*(pad_to-1) without
        a capacity, E*round_up(capacity, pad_to) with one — so nothing waits for the GPU; rows past
        ``offsets[E]`` are padding. Inside an expert, rows are in token order (then choice order). Deterministic.
        Gradients flow from ``gates`` to ``logits``; the metadata is integer and not differentiable.

    One call of ``torch.ops.gpuprim.moe_route`` (topk_gating, then moe_route_metadata, composed in C++, which
    also checks the arguments); the op returns topk_gating's (gates, expert_ids) first.
    """
    gates, expert_ids, counts, offsets, slots, token_ids, num_dropped = _moe_route(logits, k, score, renormalize,
                                                                                  capacity, pad_to, drop)
    return Routing(expert_ids, gates, counts, offsets, slots, token_ids, num_dropped)


@reports_input_errors
def moe_route_metadata(expert_ids: Tensor, gates: Tensor, num_experts: int, capacity: Optional[int] = None,
                       pad_to: int = 1, drop: str = "position") -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(counts, offsets, slots, token_ids, num_dropped) of :func:`moe_route` from given top-k choices.

    expert_ids: int64/int32 [T, k]; gates: floating [T, k], read (as fp32) only for ``drop="score"`` with a
    capacity. Ids outside [0, num_experts) are an error: IndexError at the call on the CPU and in validate mode
    (:func:`gpuprim.set_validate`); on CUDA the kernel skips them (counted in num_dropped, memory-safe) and the
    next gpuprim call on the device, or :func:`gpuprim.check_errors`, raises :class:`gpuprim.InputError`.
    Not differentiable.
    """
    if is_validating():
        check_range("moe_route_metadata", "expert_ids", expert_ids, 0, num_experts,
                    f"is out of range [0, {num_experts})")
    return torch.ops.gpuprim.moe_route_metadata.default(expert_ids, gates, num_experts, capacity, pad_to, drop)
