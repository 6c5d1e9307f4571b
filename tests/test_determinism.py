"""The determinism flag: set/get, context manager, torch default, and its place in compiled graphs."""
import pytest
import torch

import gpuprim


def test_default_follows_torch():
    assert gpuprim.is_deterministic() is False
    torch.use_deterministic_algorithms(True)
    try:
        assert gpuprim.is_deterministic() is True
    finally:
        torch.use_deterministic_algorithms(False)


def test_explicit_setting_overrides_torch():
    gpuprim.set_deterministic(True)
    assert gpuprim.is_deterministic()
    torch.use_deterministic_algorithms(True)
    try:
        gpuprim.set_deterministic(False)
        assert not gpuprim.is_deterministic()
    finally:
        torch.use_deterministic_algorithms(False)


def test_context_manager_restores():
    gpuprim.set_deterministic(False)
    with gpuprim.deterministic():
        assert gpuprim.is_deterministic()
        with gpuprim.deterministic(None):
            assert not gpuprim.is_deterministic()  # None: follow torch, which is off
    assert not gpuprim.is_deterministic()


def test_rejects_non_bool():
    with pytest.raises(TypeError, match="gpuprim.set_deterministic: mode must be a bool or None, got 1"):
        gpuprim.set_deterministic(1)


@pytest.mark.parametrize("mode", [False, True])
def test_flag_is_an_explicit_argument_in_the_compiled_graph(mode):
    """The wrapper passes the flag as the schema's `deterministic` argument, so the graph records it."""
    seen = []

    def record(gm, example_inputs):
        seen.extend(node.kwargs.get("deterministic") for node in gm.graph.nodes
                    if node.op == "call_function" and "bincount" in str(node.target))
        return gm.forward

    def f(x, w):
        return gpuprim.bincount(x, 4, w)

    torch._dynamo.reset()
    with gpuprim.deterministic(mode):
        torch.compile(f, backend=record, fullgraph=True)(torch.tensor([0, 1, 3]), torch.ones(3))
    assert seen == [mode]
