"""Bad input data found on the GPU: :class:`InputError`, :func:`check_errors`, and the wrappers' translation.

A CUDA kernel that reads indices, offsets or ids checks them as part of that read. A bad value is skipped
(memory is never touched out of bounds, the CUDA context stays usable) and recorded in a small per-device
record in host-mapped memory; the next gpuprim call on that device reads it (no sync) and raises
:class:`InputError`, as does :func:`check_errors`, which waits for the GPU first.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import torch

# Every message about a violation found on the GPU carries it (csrc/common/input_errors.cpp).
_MARKER = "detected on cuda:"

F = TypeVar("F", bound=Callable)


class InputError(IndexError, ValueError):
    """Bad input data (an index, offset, length or id) that a gpuprim kernel found on the GPU.

    Raised by the first gpuprim call on the same device after the call that received the data (or by
    :func:`gpuprim.check_errors`): the message names that op, the argument, the position and the value, e.g.
    ``gpuprim.index_add: index[1] = 5 is out of range for dimension 0 of size 5 (detected on cuda:0 after the
    call returned; the result of that call is incomplete)``. That call skipped the bad values; its result is
    incomplete. A subclass of both IndexError and ValueError, so handlers written for either (or for what
    torch raises on the CPU) catch it.
    """


def as_input_error(error: IndexError) -> IndexError:
    """``error`` as an :class:`InputError` when it reports data recorded on the GPU; otherwise ``error`` itself."""
    if isinstance(error, InputError) or _MARKER not in str(error):
        return error
    translated = InputError(str(error))
    translated.__traceback__ = error.__traceback__
    return translated


def reports_input_errors(fn: F) -> F:
    """Decorator for the op wrappers: an IndexError that reports data recorded on the GPU becomes InputError."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except IndexError as error:
            raise as_input_error(error) from None

    return wrapper  # type: ignore[return-value]


def check_integer(op: str, name: str, value: object) -> None:
    """TypeError in gpuprim's words for an argument that must be an integer (not the dispatcher's schema error)."""
    if isinstance(value, bool) or not isinstance(value, (int, torch.SymInt)):
        raise TypeError(f"gpuprim.{op}: {name} must be an integer, got {value!r}")


@torch.compiler.disable
@reports_input_errors
def check_errors() -> None:
    """Waits for every GPU that gpuprim recorded bad input on, and raises :class:`InputError` if it did.

    CUDA ops check their arguments' data without a sync: a bad index, offset or id is skipped and reported by
    the next gpuprim call on that device. Call this (e.g. at the end of a training step or before reading a
    result) to wait for the GPU and get the error here instead. Covers work from every source: eager calls,
    CUDA graph replays, the autograd backward, torch.compile'd graphs. Only the devices where a gpuprim kernel
    that checks its input has run are synchronized; without any, or in a CPU-only build, nothing happens.
    """
    torch.ops.gpuprim.check_errors.default()
