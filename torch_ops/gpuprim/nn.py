"""gpuprim.nn: drop-in modules backed by gpuprim ops."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from gpuprim.embedding_bag import embedding_bag

__all__ = ["EmbeddingBag"]


class EmbeddingBag(torch.nn.EmbeddingBag):
    """Drop-in for :class:`torch.nn.EmbeddingBag` whose forward is :func:`gpuprim.embedding_bag`.

    Same constructor (``num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
    _weight, include_last_offset, padding_idx, device, dtype``), parameters, initialisation and state dict, so
    it loads torch checkpoints. The backward is deterministic (sort + fixed-order segmented sums).
    ``max_norm`` renormalizes the looked-up rows of ``weight`` in place before each lookup, and
    ``scale_grad_by_freq`` divides each row's gradient by its count in the batch, as torch.
    """

    def forward(self, input: Tensor, offsets: Optional[Tensor] = None,
                per_sample_weights: Optional[Tensor] = None) -> Tensor:
        return embedding_bag(self.weight, input, offsets, self.mode, per_sample_weights, self.padding_idx,
                             self.include_last_offset, self.sparse, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq)
