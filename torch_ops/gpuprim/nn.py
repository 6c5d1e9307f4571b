"""gpuprim.nn: drop-in modules backed by gpuprim ops."""
from __future__ import annotations

from typing import Any, Optional

import torch
from torch import Tensor

from gpuprim.embedding_bag import embedding_bag

__all__ = ["EmbeddingBag"]


class EmbeddingBag(torch.nn.EmbeddingBag):
    """Drop-in for :class:`torch.nn.EmbeddingBag` whose forward is :func:`gpuprim.embedding_bag`.

    Same constructor (``num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
    _weight, include_last_offset, padding_idx, device, dtype``), parameters, initialisation and state dict, so
    it loads torch checkpoints. The backward is deterministic (sort + fixed-order segmented sums).
    ``max_norm`` and ``scale_grad_by_freq`` are not supported (NotImplementedError at construction).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.max_norm is not None:
            raise NotImplementedError("gpuprim.nn.EmbeddingBag: max_norm is not supported")
        if self.scale_grad_by_freq:
            raise NotImplementedError("gpuprim.nn.EmbeddingBag: scale_grad_by_freq is not supported")

    def forward(self, input: Tensor, offsets: Optional[Tensor] = None,
                per_sample_weights: Optional[Tensor] = None) -> Tensor:
        return embedding_bag(self.weight, input, offsets, self.mode, per_sample_weights, self.padding_idx,
                             self.include_last_offset, self.sparse)
