"""gpuprim.topk_gating: the fused MoE router step (score, top-k, renormalize)."""
from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor

from gpuprim._errors import check_integer, reports_input_errors


@reports_input_errors
def topk_gating(logits: Tensor, k: int, score: str = "softmax", renormalize: bool = True) -> Tuple[Tensor, Tensor]:
    """Routes each token to its ``k`` best experts: ``(gates, expert_ids)``.

    Args:
        logits: ``[T, E]`` router logits, fp32, fp16 or bf16 (any strides).
        k: experts per token, ``0 <= k <= E``.
        score: ``"softmax"`` (softmax over all ``E`` experts, in fp32) or ``"sigmoid"`` (``sigmoid(logit)``).
        renormalize: divide the ``k`` gates of a token by their sum.

    Returns:
        ``gates`` (fp32 ``[T, k]``) and ``expert_ids`` (int64 ``[T, k]``), best first. Experts are ranked by
        logit (both scores increase with it); among equal logits the lower expert index wins. NaN ranks above
        every number (its gates are NaN). Equivalent to ``torch.topk(scores, k)`` followed by the
        renormalization, with softmax + renormalize computed as the softmax over the k chosen logits.

    Determinism: the arithmetic (an exp of its own, fixed summation orders) gives the same bits on the CPU
    and CUDA and on every run. Differentiable in ``logits`` (through ``gates``; gpuprim::topk_gating_backward).
    """
    check_integer("topk_gating", "k", k)
    gates, expert_ids = torch.ops.gpuprim.topk_gating.default(logits, k, score, renormalize)
    return gates, expert_ids
