"""The one determinism flag every gpuprim op honours.

``None`` (the default) follows ``torch.are_deterministic_algorithms_enabled()``; ``True`` or
``False`` overrides it for gpuprim alone. Wrappers read the flag when called and pass it to the
op as an explicit ``deterministic`` argument, so torch.compile records it in the graph.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional

import torch

_mode: Optional[bool] = None


def set_deterministic(mode: Optional[bool]) -> None:
    """Sets gpuprim's determinism: True, False, or None to follow torch.use_deterministic_algorithms."""
    global _mode
    if mode is not None and not isinstance(mode, bool):
        raise TypeError(f"gpuprim.set_deterministic: mode must be a bool or None, got {mode!r}")
    _mode = mode


def is_deterministic() -> bool:
    """Whether gpuprim ops currently run in deterministic mode."""
    return torch.are_deterministic_algorithms_enabled() if _mode is None else _mode


@contextlib.contextmanager
def deterministic(mode: Optional[bool] = True) -> Iterator[None]:
    """Context manager: ``with gpuprim.deterministic(True): ...`` restores the previous mode on exit."""
    global _mode
    previous = _mode
    set_deterministic(mode)
    try:
        yield
    finally:
        _mode = previous
