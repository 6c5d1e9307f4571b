"""gpuprim.sort_pairs: stable key-value radix sort (CUB's speed for 32/64-bit integer keys)."""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

from gpuprim._errors import reports_input_errors
from gpuprim._validate import is_validating


@reports_input_errors
def sort_pairs(keys: Tensor, values: Tensor, *, descending: bool = False,
               end_bit: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """Sorts 1-D ``keys`` stably and moves ``values`` with them.

    Args:
        keys: 1-D tensor, bool, integer or floating dtype.
        values: tensor whose first dim has ``keys``' length; its rows (``values[i]``) travel with
            ``keys[i]``. Any dtype.
        descending: largest keys first (still stable: equal keys keep their input order).
        end_bit: integer keys only, a promise that every key lies in ``[0, 2**end_bit)``: the radix
            sort then skips the higher bits (fewer passes; e.g. ``end_bit=20`` for row ids below
            2^20). Keys outside that range give an unspecified order of the same pairs (never an
            out-of-bounds access); in validate mode (:func:`gpuprim.set_validate`) they raise a
            ValueError, at the cost of a sync.

    Returns:
        ``(sorted_keys, sorted_values)``, contiguous, with the inputs' dtypes and shapes.

    Order: :func:`gpuprim.sort`'s (NaN last ascending / first descending, -0.0 equal to +0.0), so
    the result is unique, deterministic and the same on CPU and CUDA.

    Not differentiable (no permutation is returned); for gradients use ``gpuprim.sort`` and
    ``values.index_select(0, indices)``.

    CUDA: int32/int64 keys with 4- or 8-byte rows of values, ascending, < 2^31 pairs go straight to
    CUB's DeviceRadixSort::SortPairs (no extra pass over the data); every other case is gpuprim.sort
    of the keys and a gather of the values.
    """
    if end_bit is not None and is_validating() and keys.numel() > 0 and not keys.is_floating_point():
        low, high = int(keys.min()), int(keys.max())
        if low < 0 or high >= (1 << end_bit):
            raise ValueError(f"gpuprim.sort_pairs: keys must be in [0, 2**end_bit) = [0, {1 << end_bit}) with "
                             f"end_bit={end_bit}, got keys in [{low}, {high}]")
    sorted_keys, sorted_values = torch.ops.gpuprim.sort_pairs.default(keys, values, descending=descending,
                                                                       end_bit=end_bit)
    return sorted_keys, sorted_values
