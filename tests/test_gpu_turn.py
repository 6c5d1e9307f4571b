"""tests/gpu_turn.py, the lock the GPU runner's test processes share: a test that runs alone never overlaps another,
and gets its turn while the others keep starting tests."""
import multiprocessing
import time

from gpu_turn import gpu_turn


def _hold(lock_dir: str, alone: bool, rounds: int, seconds: float, log) -> None:
    for _ in range(rounds):
        with gpu_turn(lock_dir, alone):
            start = time.monotonic()
            time.sleep(seconds)
            log.put((alone, start, time.monotonic()))


def test_alone_never_overlaps_and_is_not_starved(tmp_path):
    context = multiprocessing.get_context("fork")
    log = context.Queue()
    shared = [context.Process(target=_hold, args=(str(tmp_path), False, 12, 0.02, log)) for _ in range(4)]
    for process in shared:
        process.start()
    time.sleep(0.05)  # the shared holders are busy when the one that runs alone asks
    alone = context.Process(target=_hold, args=(str(tmp_path), True, 2, 0.05, log))
    alone.start()
    intervals = [log.get(timeout=30) for _ in range(4 * 12 + 2)]  # drained before the joins: no child blocks on it
    for process in [*shared, alone]:
        process.join(30)
        assert process.exitcode == 0
    lone = [(start, end) for is_alone, start, end in intervals if is_alone]
    others = [(start, end) for is_alone, start, end in intervals if not is_alone]
    assert len(lone) == 2 and len(others) == 48
    for start, end in lone:
        assert all(other_end <= start or other_start >= end for other_start, other_end in others)
    # Its first turn came before the shared holders were done: the turnstile let it in.
    assert min(start for start, _ in lone) < max(end for _, end in others)
