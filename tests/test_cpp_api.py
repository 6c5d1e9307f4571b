"""The C++ API and CMake package: install gpuprim, build examples/cpp against it, run it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HAS_BUILD_TREE = (ROOT / "build" / "cmake" / "CMakeCache.txt").exists() or "GPUPRIM_BUILD_DIR" in os.environ


@pytest.mark.skipif(not HAS_BUILD_TREE, reason="needs the CMake build tree of `pip install -e .` / `make build`")
def test_cpp_example_builds_links_and_runs(tmp_path):
    env = dict(os.environ, GPUPRIM_CPP_EXAMPLE_DIR=str(tmp_path))
    result = subprocess.run(["bash", str(ROOT / "examples" / "cpp" / "build_and_run.sh"), sys.executable],
                            capture_output=True, text=True, env=env, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "cumsum forward ok, backward ok, bincount ok" in result.stdout
