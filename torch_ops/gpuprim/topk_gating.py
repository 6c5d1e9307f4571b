"""gpuprim.topk_gating: the fused MoE router step (score, top-k, renormalize)."""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from gpuprim._errors import as_input_error, check_integer

# Looked up once: called per step on small batches, where the host's time is most of the call's.
_topk_gating = torch.ops.gpuprim.topk_gating.default


def topk_gating(logits: Tensor, k: int, score: str = "softmax", renormalize: bool = True, *,
                bias: Optional[Tensor] = None, num_groups: Optional[int] = None, topk_groups: Optional[int] = None,
                scaling: float = 1.0, gate_dtype: Optional[torch.dtype] = None) -> Tuple[Tensor, Tensor]:
    """Routes each token to its ``k`` best experts: ``(gates, expert_ids)``.

    Args:
        logits: ``[T, E]`` router logits, fp32, fp16 or bf16 (any strides).
        k: experts per token, ``0 <= k <= E``.
        score: ``"softmax"`` (softmax over all ``E`` experts, in fp32) or ``"sigmoid"`` (``sigmoid(logit)``).
        renormalize: divide the ``k`` gates of a token by their sum. With softmax this is the softmax over the
            ``k`` chosen logits, so Mixtral's order (top-k of the logits, then softmax over those k) and the
            renormalized softmax (softmax over E, top-k, divide by the sum) are the same function:
            ``score="softmax", renormalize=True`` for both.
        bias: ``[E]`` per-expert correction added to the scores for the *selection only* (DeepSeek-V3's
            ``e_score_correction_bias``); gates come from the unbiased scores. No gradient flows to it.
        num_groups, topk_groups: group-limited selection (DeepSeek-V3's ``n_group`` / ``topk_group``): the
            experts form ``num_groups`` equal contiguous groups; a group's score is the sum of its two best
            biased scores; only the experts of the ``topk_groups`` best groups can be chosen. Both or neither.
        scaling: every gate is multiplied by it (after renormalizing): DeepSeek-V3's ``routed_scaling_factor``.
        gate_dtype: dtype of ``gates`` (float32, float16 or bfloat16; default float32), rounded to nearest even
            from fp32 in the kernel (Qwen-style blocks cast gates to the hidden dtype before the combine).

    Returns:
        ``gates`` (``gate_dtype``, fp32 by default, ``[T, k]``) and ``expert_ids`` (int64 ``[T, k]``), best first.
        Without ``bias`` and groups, experts are ranked by logit (both scores increase with it); with either,
        by ``score + bias`` computed in fp32 (as a PyTorch router ranks them). Among equal keys the lower expert
        (and the lower group) index wins; ``torch.topk``'s choice among ties is unspecified, the one visible
        difference from a PyTorch router. NaN ranks above every number (its gates are NaN). One difference from
        HF's DeepSeek-V3 router: experts of dropped groups are excluded, where HF gives them the score 0.0
        (they can only win there if fewer than ``k`` kept experts have a positive biased score).

    Determinism: the arithmetic (an exp of its own, fixed summation orders) gives the same bits on the CPU
    and CUDA and on every run. Differentiable in ``logits`` (through ``gates``; gpuprim::topk_gating_backward);
    with ``scaling`` or ``gate_dtype`` and a gradient to compute, those two are applied after the kernel (one
    multiply and one cast, the same bits). CUDA runs one fused kernel for ``E <= 1024`` and ``k <= 32``; bias or
    groups beyond that raise on CUDA.
    """
    # The host's time is most of a small call's: no decorator layer, and the dispatcher parses only the
    # arguments given.
    if type(k) is not int:
        check_integer("topk_gating", "k", k)
    try:
        if bias is None and num_groups is None and topk_groups is None and scaling == 1.0 and gate_dtype is None:
            return _topk_gating(logits, k, score, renormalize)
        return _topk_gating(logits, k, score, renormalize, bias, num_groups, topk_groups, scaling, gate_dtype)
    except IndexError as error:  # reports_input_errors without its call layer
        raise as_input_error(error) from None
