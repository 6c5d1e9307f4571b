"""gpuprim.HashMap: a static open-addressing hash map held in plain tensors; gpuprim.IdRemapper on top."""
from __future__ import annotations

import math
from typing import Optional, Union

import torch
from torch import Tensor

from gpuprim._errors import check_errors, reports_input_errors
from gpuprim._validate import is_validating
from gpuprim.unique import unique

_KEY_DTYPES = (torch.int32, torch.int64)
_VALUE_DTYPES = (torch.int32, torch.int64, torch.float32, torch.float64)


class HashMap:
    """A static (fixed-capacity) open-addressing hash map from int32 / int64 keys to int32 / int64 / float
    values, on the GPU or the CPU, without a host sync.

    The table is three plain tensors, so a map moves with :meth:`to`, saves with ``torch.save`` and is traced by
    ``torch.compile``: ``keys`` [capacity] (the key dtype's minimum marks a free slot), ``values``
    [capacity + 1] (the last one belongs to the key equal to that minimum, so EVERY key value is allowed) and
    ``state`` (int64 [2]: the number of keys stored, whether the minimum key is stored). Linear probing with a
    murmur3-mixed home slot; every probe loop is bounded by the capacity (never a hang).

    Where the key and value dtypes are the same, :meth:`empty` interleaves ``keys`` and ``values`` in one
    buffer (strided views of it: a key beside its value, so a lookup reads one memory sector, not two); other
    maps hold them in two contiguous tensors. Every op takes either layout.

    Determinism: the contents (which keys are stored, each key's value, the size) are deterministic and the
    same on CPU and CUDA: among equal keys of one :meth:`insert`, the value at the LOWEST position is stored
    (an insert that overflows the table is the exception: on CUDA, which keys found room depends on timing).
    The slot a key occupies is not (on CUDA colliding keys of one call claim slots in any order), so compare
    maps through :meth:`find`, not their ``keys`` tensors.

    A full table is an error naming the key that did not fit: on the CPU at the call (ValueError); on CUDA the
    key is skipped and the next gpuprim call on that device (or :func:`gpuprim.check_errors`) raises
    :class:`gpuprim.InputError`; in validate mode (:func:`gpuprim.set_validate`) :meth:`insert` syncs and
    raises at the call.
    """

    def __init__(self, keys: Tensor, values: Tensor, state: Tensor) -> None:
        self.keys = keys
        self.values = values
        self.state = state

    @classmethod
    def empty(
        cls,
        capacity: int,
        key_dtype: torch.dtype = torch.int64,
        value_dtype: torch.dtype = torch.int64,
        device: Optional[Union[str, torch.device]] = None,
    ) -> "HashMap":
        """An empty map of ``capacity`` (>= 1) slots."""
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"gpuprim.HashMap: capacity must be an integer >= 1, got {capacity!r}")
        if key_dtype not in _KEY_DTYPES:
            raise TypeError(f"gpuprim.HashMap: key_dtype must be torch.int32 or torch.int64, got {key_dtype}")
        if value_dtype not in _VALUE_DTYPES:
            raise TypeError(
                "gpuprim.HashMap: value_dtype must be torch.int32, int64, float32 or float64, " f"got {value_dtype}"
            )
        free = torch.iinfo(key_dtype).min
        state = torch.zeros(2, dtype=torch.int64, device=device)
        if key_dtype == value_dtype:
            # Each key beside its value. Only for one dtype: torch.compile cannot trace an insert into views of
            # one buffer with different dtypes.
            slots = torch.zeros((capacity + 1, 2), dtype=key_dtype, device=device)
            slots[:capacity, 0] = free
            return cls(slots[:capacity, 0], slots[:, 1], state)
        keys = torch.full((capacity,), free, dtype=key_dtype, device=device)
        return cls(keys, torch.zeros(capacity + 1, dtype=value_dtype, device=device), state)

    @classmethod
    def build(
        cls, keys: Tensor, values: Tensor, load_factor: float = 0.5, capacity: Optional[int] = None
    ) -> "HashMap":
        """A map holding ``(keys, values)`` (duplicates: the lowest position's value), of ``capacity`` slots or
        ``ceil(keys.numel() / load_factor)`` (at least 1) with ``0 < load_factor < 1``."""
        if not isinstance(load_factor, (int, float)) or not 0.0 < float(load_factor) < 1.0:
            raise ValueError(f"gpuprim.HashMap.build: load_factor must be in (0, 1), got {load_factor!r}")
        if capacity is None:
            capacity = max(1, math.ceil(keys.numel() / float(load_factor)))
        table = cls.empty(capacity, keys.dtype, values.dtype, keys.device)
        table.insert(keys, values)
        return table

    @reports_input_errors
    def insert(self, keys: Tensor, values: Tensor) -> None:
        """Insert-or-assign ``values`` (the table's value dtype, ``keys``' shape) under ``keys`` (the table's key
        dtype). Among equal keys of this call the lowest position's value is stored."""
        torch.ops.gpuprim.hash_map_insert_.default(self.keys, self.values, self.state, keys, values)
        if is_validating() and self.keys.is_cuda:
            check_errors()

    @reports_input_errors
    def find(self, queries: Tensor, default: Union[int, float] = 0) -> Tensor:
        """The value of each query (``queries``' shape, the value dtype), ``default`` where it is absent."""
        return torch.ops.gpuprim.hash_map_find.default(self.keys, self.values, self.state, queries, default)

    @reports_input_errors
    def contains(self, queries: Tensor) -> Tensor:
        """Whether each query is stored (bool, ``queries``' shape)."""
        return torch.ops.gpuprim.hash_map_contains.default(self.keys, self.values, self.state, queries)

    def size(self) -> Tensor:
        """The number of keys stored: a 1-element int64 tensor on the map's device (no sync)."""
        return self.state[:1]

    @property
    def capacity(self) -> int:
        return self.keys.numel()

    @property
    def device(self) -> torch.device:
        return self.keys.device

    def to(self, *args: object, **kwargs: object) -> "HashMap":
        """The map on another device (``Tensor.to``'s arguments; dtypes never change)."""
        device = torch.empty(0).to(*args, **kwargs).device  # type: ignore[call-overload]
        moved = HashMap.empty(self.capacity, self.keys.dtype, self.values.dtype, device)
        moved.keys.copy_(self.keys)
        moved.values.copy_(self.values)
        moved.state.copy_(self.state)
        return moved

    def __repr__(self) -> str:
        return (
            f"gpuprim.HashMap(capacity={self.capacity}, key_dtype={self.keys.dtype}, "
            f"value_dtype={self.values.dtype}, device={self.device})"
        )


class IdRemapper:
    """Raw ids (int32 / int64, any values) to dense rows 0, 1, 2, ... in first-seen order, on the device.

    ``remapper(ids)`` returns each id's row (int64, ``ids``' shape), giving ids not seen before the next rows in
    the order of their first occurrence in ``ids``; ``lookup`` reads rows without adding ids (-1 where unseen).
    Sync-free (a sized :func:`gpuprim.unique`, the map's lookups and one insert), so a training step that remaps
    its batch captures in a CUDA graph. The number of rows grows on the device (:meth:`num_rows`) up to the
    capacity; a full map is the :class:`HashMap`'s error. Deterministic: the rows depend on the ids only.
    """

    def __init__(
        self,
        capacity: int,
        key_dtype: torch.dtype = torch.int64,
        device: Optional[Union[str, torch.device]] = None,
    ) -> None:
        self.map = HashMap.empty(capacity, key_dtype, torch.int64, device)

    def num_rows(self) -> Tensor:
        """Rows given out so far: a 1-element int64 tensor on the device."""
        return self.map.size()

    def lookup(self, ids: Tensor) -> Tensor:
        """Each id's row, -1 for ids not seen yet (adds nothing)."""
        return self.map.find(ids, -1)

    def __call__(self, ids: Tensor) -> Tensor:
        flat = ids.reshape(-1)
        n = flat.numel()
        if n == 0:
            return torch.empty(ids.shape, dtype=torch.int64, device=ids.device)
        distinct, inverse, num = unique(flat, return_inverse=True, size=n)
        position = torch.arange(n, device=flat.device)
        first = torch.full((n,), n, dtype=torch.int64, device=flat.device)
        first = first.scatter_reduce(0, inverse, position, "amin")
        valid = position < num
        new = valid & ~self.map.contains(distinct)
        # New ids first, by first occurrence; their rank among themselves is their offset past the old rows.
        order = torch.argsort(torch.where(new, first, n + position))
        rank = torch.empty_like(order).scatter_(0, order, position)
        rows = torch.where(new, self.map.size().clone() + rank, self.map.find(distinct, -1))
        # Padding entries repeat entry 0 at higher positions: the lowest position wins, so they change nothing.
        keys = torch.where(valid, distinct, distinct[:1])
        self.map.insert(keys, torch.where(valid, rows, rows[:1]))
        return rows[inverse].reshape(ids.shape)
