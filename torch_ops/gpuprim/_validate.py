"""Validate mode: data-dependent argument checks that need a device sync.

Off by default, so ops never wait for the GPU. When on, wrappers check values that only the data
can tell (e.g. bincount values outside [0, num_bins)) and raise instead of dropping or clamping.
Kernels never read or write out of bounds in either mode.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import torch

_validate = False


def set_validate(mode: bool) -> None:
    """Turns validate mode on or off for every gpuprim op."""
    global _validate
    if not isinstance(mode, bool):
        raise TypeError(f"gpuprim.set_validate: mode must be a bool, got {mode!r}")
    _validate = mode


def check_range(op: str, argument: str, values: "torch.Tensor", low: int, high: int, rule: str) -> None:
    """Validate mode's host check of an index-like argument (syncs): IndexError at the first value outside
    [low, high), worded as the kernels' reports ("<argument>[<position>] = <value> <rule>")."""
    if values.numel() == 0 or values.is_floating_point():
        return  # the op's own checks report dtype errors
    flat = values.reshape(-1)
    bad = ((flat < low) | (flat >= high)).nonzero()
    if bad.numel() > 0:
        position = int(bad[0])
        name = argument if values.dim() <= 1 else f"{argument}.flatten()"
        raise IndexError(f"gpuprim.{op}: {name}[{position}] = {int(flat[position])} {rule}")


def is_validating() -> bool:
    """Whether validate mode is on."""
    return _validate


@contextlib.contextmanager
def validate(mode: bool = True) -> Iterator[None]:
    """Context manager form of set_validate."""
    global _validate
    previous = _validate
    set_validate(mode)
    try:
        yield
    finally:
        _validate = previous
