"""Loading gpuprim where it does not fit: another torch, no CUDA runtime, a GPU the build has no code for.
Each gives a message that says what to do (never an undefined-symbol error or a crash). These tests copy the
Python package next to a made-up build record or library; they need no build of gpuprim."""
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

import gpuprim
from gpuprim import _library

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "torch_ops" / "gpuprim"


def fake_install(tmp_path, info=None, library=b"") -> Path:
    """A copy of the Python package with lib/gpuprim_build.json = info and lib/libgpuprim.so = library."""
    target = tmp_path / "site" / "gpuprim"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("lib", "__pycache__"))
    (target / "lib").mkdir()
    (target / "lib" / "libgpuprim.so").write_bytes(library)
    if info is not None:
        (target / "lib" / "gpuprim_build.json").write_text(json.dumps(info))
    return tmp_path / "site"


def import_error(site: Path, before: str = "") -> str:
    """The error `import gpuprim` raises from that folder (in a fresh interpreter)."""
    code = f"import torch\n{before}\nimport gpuprim"
    result = subprocess.run([sys.executable, "-c", code], cwd=site, capture_output=True, text=True, timeout=300,
                            env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert result.returncode != 0, "import gpuprim succeeded"
    assert "Segmentation fault" not in result.stderr
    return result.stderr.strip().splitlines()[-1]


def built_for(torch_version: str, cuda=None, torch_cuda=None) -> dict:
    return {"version": gpuprim.__version__, "torch": torch_version, "torch_cuda": torch_cuda, "cuda": cuda,
            "cuda_architectures": ["9.0"] if cuda else []}


def test_another_torch_minor_version_is_refused_before_loading(tmp_path):
    error = import_error(fake_install(tmp_path, built_for("2.3.1+cu121")))
    assert error.startswith("ImportError: gpuprim")
    assert "was built for torch 2.3.1+cu121" in error and f"torch {torch.__version__} is loaded" in error
    assert "torch==2.3.*" in error and "pip install --no-build-isolation -e ." in error


def test_a_cuda_build_needs_a_cuda_torch(tmp_path):
    site = fake_install(tmp_path, built_for(torch.__version__, cuda="13.0.88", torch_cuda="13.0"))
    error = import_error(site, before="torch.version.cuda = None")
    assert "needs a CUDA build of torch" in error and "GPUPRIM_WITH_CUDA=0" in error


def test_another_cuda_major_version_is_refused(tmp_path):
    site = fake_install(tmp_path, built_for(torch.__version__, cuda="12.8.93", torch_cuda="12.8"))
    error = import_error(site, before="torch.version.cuda = '13.0'")
    assert "CUDA runtimes differ" in error and "libcudart.so.12" in error


def _shared_library(tmp_path, source: str, *link: str) -> bytes:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("needs a C compiler")
    (tmp_path / "lib.c").write_text(source)
    output = tmp_path / "lib.so"
    subprocess.run([cc, "-shared", "-fPIC", str(tmp_path / "lib.c"), "-o", str(output), *link], check=True,
                   capture_output=True)
    return output.read_bytes()


def test_undefined_symbol_says_which_torch_to_use(tmp_path):
    # Without a build record (e.g. a library copied by hand) the loader's error is still explained.
    library = _shared_library(tmp_path, "void c10_symbol_of_another_torch(void);\n"
                                        "void call(void) { c10_symbol_of_another_torch(); }\n")
    error = import_error(fake_install(tmp_path, None, library))
    assert "does not match the loaded torch" in error and "undefined symbol" in error
    assert "pip install --no-build-isolation -e ." in error


def test_missing_cuda_runtime_is_explained(tmp_path):
    (tmp_path / "dep").mkdir()
    _shared_library(tmp_path / "dep", "void f(void) {}\n", "-Wl,-soname,libcudart.so.99")
    shutil.move(tmp_path / "dep" / "lib.so", tmp_path / "dep" / "libcudart.so.99")
    fake_runtime = str(tmp_path / "dep" / "libcudart.so.99")
    library = _shared_library(tmp_path, "void g(void) {}\n", "-Wl,--no-as-needed", fake_runtime)
    (tmp_path / "dep" / "libcudart.so.99").unlink()
    error = import_error(fake_install(tmp_path, None, library))
    assert "needs torch's CUDA runtime" in error and "libcudart.so.99" in error


@pytest.mark.parametrize("capability, architectures, runs", [
    ((9, 0), ["9.0"], True),
    ((8, 6), ["8.0"], True),          # same major, higher minor: the sm_80 code runs
    ((8, 0), ["8.6"], False),
    ((12, 0), ["8.0", "9.0", "10.0+PTX"], True),   # PTX is compiled for newer GPUs by the driver
    ((12, 0), ["8.0", "9.0", "10.0"], False),
    ((7, 5), ["8.0", "9.0", "10.0+PTX"], False),
    ((9, 0), ["9.0a"], True),
    ((9, 1), ["9.0a"], False),
])
def test_which_gpus_a_build_runs_on(capability, architectures, runs):
    assert _library.runs_on(capability, architectures) == runs


def test_a_gpu_without_kernels_gets_a_warning_that_says_how_to_rebuild(monkeypatch):
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i: (7, 5))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: "Tesla T4")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _library._warn_about_unsupported_gpus(["8.0", "9.0"])
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "Tesla T4" in message and "7.5" in message and 'TORCH_CUDA_ARCH_LIST="7.5"' in message


def test_the_build_record_matches_this_torch():
    info = gpuprim.build_info()
    if info is None:
        pytest.skip("this build did not record itself (built without setup.py)")
    assert info["version"] == gpuprim.__version__
    assert info["torch"].split(".")[:2] == torch.__version__.split(".")[:2]


def test_version_has_one_home():
    setup_text = (ROOT / "setup.py").read_text()
    assert "_version.py" in setup_text and '"0.' not in setup_text
    assert gpuprim.__version__ in (PACKAGE / "_version.py").read_text()
