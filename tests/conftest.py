"""pytest setup: the `device` fixture runs each test on CPU, and on CUDA when a GPU is present."""
import os

import pytest
import torch
from gpu_turn import gpu_turn

import gpuprim  # noqa: F401  (loads the library: registers torch.ops.gpuprim.*)

HAS_CUDA = torch.cuda.is_available()

# GPUPRIM_TEST_DEVICES=cuda (the GPU runner's time-saving option) leaves out the CPU variants of
# device-parametrized tests, which CI runs; tests without the fixture run either way.
_ALL_DEVICES = {"cpu": pytest.param("cpu", id="cpu"), "cuda": pytest.param("cuda", id="cuda", marks=pytest.mark.gpu)}
DEVICES = [_ALL_DEVICES[d] for d in os.environ.get("GPUPRIM_TEST_DEVICES", "cpu,cuda").split(",") if d]


# GPUPRIM_TEST_SMALL=1 (scripts/gpu_runner.sh sets it under SANITIZE=...): small shapes only. Leaves out the
# tests marked slow (> 2^31 elements) and these other multi-GiB ones, which compute-sanitizer cannot run in time.
SMALL = os.environ.get("GPUPRIM_TEST_SMALL", "") == "1"
LARGE_TESTS = {
    "test_moe_route.py::test_cuda_beyond_int32_elements": "T*k*H > 2^31 elements (9 GB of bf16)",
}


def large_reason(item) -> str:
    """Why a test is multi-GiB (marked slow, or in LARGE_TESTS), or "" for the others."""
    return LARGE_TESTS.get(f"{item.path.name}::{item.originalname}", "") or (
        "more than 2^31 elements" if "slow" in item.keywords else "")


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device (runs on the H200 via scripts/gpu_runner.sh)")
    for item in items:
        if "gpu" in item.keywords and not HAS_CUDA:
            item.add_marker(skip_gpu)
        if SMALL and large_reason(item):
            item.add_marker(pytest.mark.skip(reason=f"GPUPRIM_TEST_SMALL=1: {large_reason(item)}"))


# GPUPRIM_TEST_GPU_LOCK=DIR (scripts/run_tests_isolated.py sets it): the test processes it runs side by side take
# turns with the GPU's memory. A multi-GiB test (marked slow, or in LARGE_TESTS) runs alone; every process gives its
# cached memory back after each test, so that what such a test needs is free when its turn comes. Empty: no turns.
GPU_LOCK_DIR = os.environ.get("GPUPRIM_TEST_GPU_LOCK", "")


@pytest.fixture(autouse=True)
def _gpu_memory_turn(request):
    if not GPU_LOCK_DIR or not HAS_CUDA:
        yield
        return
    with gpu_turn(GPU_LOCK_DIR, alone=bool(large_reason(request.node))):
        yield
        if torch.cuda.is_initialized():  # _no_input_errors_left (set up later, torn down first) has synchronized
            torch.cuda.empty_cache()


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _reset_flags():
    """Every test starts from the default determinism and validate modes."""
    gpuprim.set_deterministic(None)
    gpuprim.set_validate(False)
    yield
    gpuprim.set_deterministic(None)
    gpuprim.set_validate(False)


@pytest.fixture(autouse=True)
def _no_input_errors_left():
    """A test that gives a CUDA op bad data must consume the report (gpuprim.check_errors), so that it can never
    surface in the next test."""
    yield
    if HAS_CUDA and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        gpuprim.check_errors()

