"""Test processes running side by side on one GPU take turns with its memory (scripts/run_tests_isolated.py).

A readers-writer lock over two files in one directory: every test holds it shared, a multi-GiB test holds it alone.
The turnstile gives a waiting test that must run alone its turn: no test starts while it waits for the running
ones to end, so a stream of small tests cannot keep it out.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from typing import Iterator


@contextlib.contextmanager
def gpu_turn(lock_dir: str, alone: bool) -> Iterator[None]:
    with open(os.path.join(lock_dir, "gpu.turnstile"), "a") as turnstile, \
            open(os.path.join(lock_dir, "gpu.lock"), "a") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
