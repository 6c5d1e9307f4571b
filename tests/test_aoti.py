"""torch.export + AOTInductor with gpuprim ops (examples/export_aoti.py): three small models (MoE block,
EmbeddingBag tower, top-k sampling head) export strict and non-strict with dynamic batch / token counts,
compile into .pt2 packages that match eager in Python, and run from C++ (examples/cpp/aoti_main.cpp through
torch::inductor::AOTIModelPackageLoader, libgpuprim linked) with the eager outputs."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import export_aoti  # noqa: E402

HAS_BUILD_TREE = (ROOT / "build" / "cmake" / "CMakeCache.txt").exists() or "GPUPRIM_BUILD_DIR" in os.environ


@pytest.fixture(scope="module")
def packages(tmp_path_factory, request):
    """device -> folder of compiled packages (each device compiled once per module)."""
    built = {}  # each model's process calls export_aoti.link_shared_libstdcxx() (the example's main does)

    def build(device):
        if device not in built:
            folder = tmp_path_factory.mktemp(f"aoti_{device}")
            # One process per model: each checks its package against eager, as export_compile_check does.
            # GPUPRIM_AOTI_TIMEOUT (seconds per model): a stuck compile fails with its stacks instead of hanging.
            export_aoti.export_compile_check_parallel(export_aoti.MODELS, device, folder,
                                                      jobs=min(len(export_aoti.MODELS), os.cpu_count() or 1),
                                                      timeout=float(os.environ.get("GPUPRIM_AOTI_TIMEOUT", 1500)))
            built[device] = folder
        return built[device]

    return build


def test_export_compile_and_match_eager(device, packages):
    folder = packages(device)
    assert sorted(p.stem for p in folder.glob("*.pt2")) == sorted(export_aoti.MODELS)


@pytest.mark.parametrize("name", export_aoti.MODELS)
def test_dynamic_dims_stay_dynamic(name):
    """Batch / token dims are symbols in the exported program, not the example's sizes."""
    model, inputs, shapes = export_aoti.example(name, "cpu")
    with torch.no_grad():
        program = torch.export.export(model, inputs, dynamic_shapes=shapes, strict=False)
    user_inputs = set(program.graph_signature.user_inputs)
    for node in (n for n in program.graph.nodes if n.op == "placeholder" and n.name in user_inputs):
        assert isinstance(node.meta["val"].shape[0], torch.SymInt), f"{name}: {node.name} dim 0 was specialized"


@pytest.mark.skipif(not HAS_BUILD_TREE, reason="needs the CMake build tree of `pip install -e .` / `make build`")
def test_packages_run_from_cpp(device, packages, tmp_path):
    folder = packages(device)
    env = dict(os.environ, GPUPRIM_CPP_EXAMPLE_DIR=str(tmp_path))
    result = subprocess.run(["bash", str(ROOT / "examples" / "cpp" / "build_and_run.sh"), sys.executable, str(folder)],
                            capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in export_aoti.MODELS:
        assert f"{name} ({device}, batch" in result.stdout
    assert "all AOTInductor packages match eager" in result.stdout
